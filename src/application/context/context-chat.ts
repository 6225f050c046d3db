/**
 * A chat turn's context in `map` mode: the project's instruction files, then a repository map
 * ranked for the message (context-map.ts), together within mapBudget(window). The instruction
 * files come first (they are the project's rules; within their own maxTokens), the map fills what
 * they leave. Which instruction files: every root's, the project's named ones, and the folders' of
 * the paths the message names and of the few files it ranks best by its words; the other folders'
 * are named in the map, for the model to read when it works there.
 */
import type { EffectiveContextSettings } from '../../domain/context/context.ts';
import type { FileInventory, InventoryEntry } from '../ports/file-inventory.port.ts';
import type { TokenCounter } from '../ports/language-model.port.ts';
import type { Assembler } from './context-assembly.ts';
import {
  InstructionCache,
  instructionFilesOf,
  Instructions,
  pathsNamed,
  type InstructionSelection,
} from './context-instructions.ts';
import { mapBudget, RepoMapper } from './context-map.ts';
import { locate, rankOrder, type Pool } from './context-ranking.ts';
import {
  fragmentsText,
  instructionsText,
  snapshotRef,
  type AssembledContext,
  type ChatContext,
} from './context.types.ts';

/** Files ranked best by the message's words whose folders' instruction files are given. */
const FOLDERS_IN_PLAY = 3;

export interface ChatMapInput {
  project: string;
  settings: EffectiveContextSettings;
  pools: Pool[];
  goal: string;
  modelWindow: number;
  signal?: AbortSignal | undefined;
}

export class ChatMap {
  private readonly assembler: Assembler;
  private readonly mapper: RepoMapper;
  private readonly inventory: FileInventory;
  private readonly tokens: TokenCounter;
  private readonly instructionReads: InstructionCache;

  constructor(deps: {
    assembler: Assembler;
    inventory: FileInventory;
    tokens: TokenCounter;
    instructionReads: InstructionCache;
  }) {
    this.assembler = deps.assembler;
    this.inventory = deps.inventory;
    this.tokens = deps.tokens;
    this.instructionReads = deps.instructionReads;
    this.mapper = new RepoMapper(deps.inventory, deps.tokens, (pool, entry, max) =>
      deps.assembler.text(pool, entry, max),
    );
  }

  async build(c: ChatMapInput): Promise<ChatContext> {
    const budget = mapBudget(c.modelWindow);
    const { settings: s, pools } = c;
    const instr = s.instructions.enabled
      ? new Instructions(
          {
            pools,
            settings: s.instructions,
            actionFiles: [],
            named: pathsNamed([c.goal]),
            dryRun: false,
          },
          this.inventory,
          this.tokens,
          this.instructionReads,
        )
      : undefined;
    // Instruction files are given as such (or named), never as files of the map.
    instr?.markPools();
    const scores = await this.assembler.rank({
      pools,
      settings: s,
      goal: c.goal,
      decisions: [],
      dryRun: false,
      signal: c.signal,
    });
    const order = [...rankOrder(pools, scores)];
    const inPlay = order
      .filter((id) => scores.get(id)?.why.some((w) => w.strategy === 'goal-match') === true)
      .slice(0, FOLDERS_IN_PLAY)
      .map((id) => {
        const { pool, i } = locate(pools, id);
        return { resource: pool.resource, path: (pool.listing.files[i] as InventoryEntry).path };
      });
    const given = instr ? await this.instructionsGiven(c, instr, inPlay, budget) : { text: '', tokens: 0, others: [] };
    return this.withMap(c, order, given, budget);
  }

  /** The instruction files that fit the budget, as text, and the paths of those left out. */
  private async instructionsGiven(
    c: ChatMapInput,
    instr: Instructions,
    inPlay: Array<{ resource: string; path: string }>,
    budget: number,
  ): Promise<Given> {
    // The files' own counts leave out their headings: the text decides, and fewer files are
    // chosen until it fits.
    let chosen: InstructionSelection;
    let text: string;
    let tokens: number;
    for (let limit = budget; ;) {
      chosen = await instr.select(inPlay, limit, c.signal);
      text = instructionsText({ project: c.project, instructionFragments: chosen.fragments });
      tokens = text === '' ? 0 : await this.tokens.count(text);
      if (tokens <= budget) break;
      limit = Math.min(limit - (tokens - budget), chosen.used - 1);
    }
    const givenPaths = new Set(chosen.fragments.map((f) => `${f.resource}\0${f.path}`));
    const { pools } = c;
    const others = pools.flatMap((p) =>
      instructionFilesOf(p.listing.files)
        .filter((path) => !givenPaths.has(`${p.resource}\0${path}`))
        .map((path) => (pools.length > 1 ? `${p.resource}:${path}` : path)),
    );
    return { text, tokens, others };
  }

  /** The instructions given, then the map in the room they leave; the whole text must fit the budget. */
  private async withMap(c: ChatMapInput, order: number[], given: Given, budget: number): Promise<ChatContext> {
    // Two tokens for the blank line between the two parts.
    let room = budget - given.tokens - (given.text === '' ? 0 : 2);
    for (;;) {
      const map = await this.mapper.build({
        project: c.project,
        pools: c.pools,
        order,
        room,
        otherInstructions: given.others,
        signal: c.signal,
      });
      const text = [given.text, map.text].filter((t) => t !== '').join('\n\n');
      const tokens = text === '' ? 0 : await this.tokens.count(text);
      // The parts counted apart may differ by a token or two from the whole: the whole decides.
      if (tokens <= budget || map.text === '' || room <= 0)
        return { text, tokens, map: { files: map.files, shown: map.shown } };
      room -= tokens - budget;
    }
  }
}

/** The instruction files given in full (text and tokens), and the other ones the map names. */
interface Given {
  text: string;
  tokens: number;
  others: string[];
}

/**
 * `full` mode: the `default` view's files as a chat turn had them before the map
 * (`fragmentsText(c, 'for this message')`). The files' tokens are counted already; only their
 * headings are counted here.
 */
export async function fullChatContext(c: AssembledContext, tokens: TokenCounter): Promise<ChatContext> {
  const purpose = 'for this message';
  const text = fragmentsText(c, purpose);
  if (text === '') return { text, tokens: 0, snapshot: snapshotRef(c) };
  const headings = fragmentsText(
    {
      ...c,
      instructionFragments: c.instructionFragments.map((f) => ({ ...f, text: '' })),
      fragments: c.fragments.map((f) => ({ ...f, text: '' })),
    },
    purpose,
  );
  return { text, tokens: c.budget.used + (await tokens.count(headings)), snapshot: snapshotRef(c) };
}

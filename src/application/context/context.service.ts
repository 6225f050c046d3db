/**
 * The context service (DESIGN.md §4.5): a project's context settings per view (`show`, `set`,
 * revisioned through the registry), and what an actor sees (`inspect`, `simulate`, `assemble`):
 * the files of every resource of the project, ranked, cut by the view's limits. See
 * context-ranking.ts for the scores, context-assembly.ts for the limits and the caches.
 */
import { CONTEXT_VIEWS, type ContextView, type EffectiveContextSettings } from '../../domain/context/context.ts';
import { AppError } from '../../domain/errors.ts';
import { LLM_ACTOR_DEFAULTS } from '../../domain/registry/actor.definition.ts';
import { type ProjectDefinition } from '../../domain/registry/project.definition.ts';
import type { FileInventory } from '../ports/file-inventory.port.ts';
import type { TokenCounter } from '../ports/language-model.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { RegistryService } from '../registry/registry.service.ts';
import { budgetOf } from './context-budget.ts';
import { Assembler, ContentCache, type AssemblyOutcome } from './context-assembly.ts';
import {
  InstructionCache,
  Instructions,
  pathsNamed,
  withInstructions,
  type InstructionSelection,
} from './context-instructions.ts';
import { candidateStatus } from './candidate-status.ts';
import { listingIndex, type Pool } from './context-ranking.ts';
import { applySet, checkMode, checkView, effectiveSettings, ownSettings } from './context-settings.ts';
import { ChatMap, fullChatContext } from './context-chat.ts';
import type {
  AssembledContext,
  ChatContext,
  ChatContextInput,
  RankedFile,
  ContextInspection,
  ContextProvider,
  ContextQuery,
  ContextSetInput,
  ContextShowInput,
  ContextShowResult,
} from './context.types.ts';

/** What the service needs of a plan: its goal, its projects, its decisions so far. */
export interface ContextPlan {
  projects: readonly string[];
  /** The plan's action: the instruction files it names are read too. */
  action?: string | undefined;
  description: string;
  /** `goal` (the built-in goal action's argument) is the goal when present; else the description. */
  arguments: Readonly<Record<string, unknown>>;
  decisions?: ReadonlyArray<{ question: string; chosen: unknown; rationale: string; superseded?: boolean }> | undefined;
}

export interface ContextServiceDeps {
  registry: Pick<RegistryService, 'visible' | 'update' | 'lookup' | 'use'>;
  inventory: FileInventory;
  tokens: TokenCounter;
  /** The caller's plans (NOT_FOUND for one that is not theirs); without it a `planId` query is refused. */
  plans?: { get(planId: string, principal: Principal): Promise<ContextPlan> } | undefined;
  /** Characters of file text kept between assemblies with their token counts (default 64 Mi). */
  contentCacheChars?: number | undefined;
}

interface Target {
  project: ProjectDefinition;
  view: ContextView;
  goal: string;
  decisions: readonly string[];
  /** The instruction files the plan's action names. */
  actionInstructions: readonly string[];
  planId?: string | undefined;
  budget?: number | undefined;
  modelWindow?: number | undefined;
  answerReserve?: number | undefined;
}

export class ContextService implements ContextProvider {
  private readonly assembler: Assembler;
  private readonly instructionReads = new InstructionCache();
  private readonly chatMap: ChatMap;

  private readonly deps: ContextServiceDeps;

  constructor(deps: ContextServiceDeps) {
    this.deps = deps;
    this.assembler = new Assembler(
      deps.inventory,
      deps.tokens,
      new ContentCache(deps.contentCacheChars ?? 64 * 1024 * 1024),
    );
    this.chatMap = new ChatMap({
      assembler: this.assembler,
      inventory: deps.inventory,
      tokens: deps.tokens,
      instructionReads: this.instructionReads,
    });
  }

  async show(input: ContextShowInput, principal: Principal): Promise<ContextShowResult> {
    const view = input.view === undefined ? undefined : checkView(input.view);
    const p = await this.deps.registry.visible('project', input.project, principal);
    const ctx = p.definition.settings?.context;
    return {
      project: p.name,
      revision: p.revision,
      views: (view ? [view] : [...CONTEXT_VIEWS]).map((v) => effectiveSettings(ctx, v)),
    };
  }

  /** Writes the view's fields (null clears one) as a new revision of the project; answers with that view's effective settings. */
  async set(input: ContextSetInput, principal: Principal): Promise<ContextShowResult> {
    const view = checkView(input.view);
    const p = await this.deps.registry.visible('project', input.project, principal);
    const next = applySet(p.definition.settings?.context, { view, settings: input.settings ?? {} });
    // The globs must compile as the inventory compiles them; located in the caller's terms.
    const own = ownSettings(next, view);
    try {
      this.deps.inventory.globFilter(own.include ?? [], own.exclude ?? []);
    } catch (err) {
      if (err instanceof AppError)
        throw new AppError(err.reason, `${err.message}; nothing was written`, {
          fields: err.fields.map((f) => ({ ...f, field: `settings.${f.field}` })),
          hint: err.hint,
        });
      throw err;
    }
    const definition = structuredClone(p.definition);
    const settings = { ...(definition.settings ?? {}) };
    if (next) settings.context = next;
    else delete settings.context;
    if (Object.keys(settings).length > 0) definition.settings = settings;
    else delete definition.settings;
    const updated = await this.deps.registry.update(
      'project',
      p.name,
      { definition },
      input.expectedRevision,
      principal,
    );
    return { project: p.name, revision: updated.revision, views: [effectiveSettings(next, view)] };
  }

  /** What is in the context for a plan or a goal, and why: files read and tokens counted for real. */
  async inspect(query: ContextQuery, principal: Principal): Promise<ContextInspection> {
    const target = await this.target(query, principal);
    const { fragments: _f, ...inspection } = await this.run(target, { dryRun: false, wantText: false });
    return inspection;
  }

  /** A dry run: nothing is read, tokens are estimated from sizes (4 bytes a token). */
  async simulate(query: ContextQuery, principal: Principal): Promise<ContextInspection> {
    const target = await this.target(query, principal);
    const { fragments: _f, ...inspection } = await this.run(target, { dryRun: true, wantText: false });
    return inspection;
  }

  async assemble(input: Parameters<ContextProvider['assemble']>[0]): Promise<AssembledContext> {
    return this.run(
      {
        project: await this.projectNamed(input.project),
        view: checkView(input.view),
        goal: input.goal,
        decisions: input.decisions ?? [],
        actionInstructions: await this.actionInstructions(input.action),
        modelWindow: input.modelWindow,
        answerReserve: input.answerReserve,
      },
      { dryRun: false, wantText: true, signal: input.signal },
    );
  }

  /**
   * A chat turn's context (ContextProvider.chatContext): `map`, the instruction files and a
   * repository map (context-chat.ts); `full`, the `default` view's files as the turn had them.
   */
  async chatContext(input: ChatContextInput): Promise<ChatContext> {
    const mode = checkMode(input.mode);
    const modelWindow = input.modelWindow ?? LLM_ACTOR_DEFAULTS.contextWindow;
    if (mode === 'full')
      return fullChatContext(await this.assemble({ ...input, view: 'default', modelWindow }), this.deps.tokens);
    const project = await this.projectNamed(input.project);
    const { settings } = effectiveSettings(project.settings?.context, 'default');
    return this.chatMap.build({
      project: project.name,
      settings,
      pools: await this.pools(project, settings, input.signal),
      goal: input.goal,
      modelWindow,
      signal: input.signal,
    });
  }

  /** A project by name, with no access check (the caller has checked the plan's or session's). */
  private async projectNamed(name: string): Promise<ProjectDefinition> {
    const e = await this.deps.registry.lookup('project', name);
    if (e?.kind !== 'project')
      throw new AppError('NOT_FOUND', `No project named ${name}`, { details: { entity: 'project', name } });
    return e.definition;
  }

  private async target(q: ContextQuery, principal: Principal): Promise<Target> {
    const view = checkView(q.view ?? 'default');
    if (q.budget !== undefined && (!Number.isInteger(q.budget) || q.budget < 0))
      throw new AppError('INVALID_PARAMS', 'budget must be a whole number of tokens, 0 or more', {
        fields: [{ field: 'budget', description: 'must be an integer >= 0' }],
      });
    const p = await this.deps.registry.visible('project', q.project, principal);
    let goal = q.goal ?? '';
    let decisions: string[] = [];
    let action: string | undefined;
    if (q.planId !== undefined) {
      if (!this.deps.plans)
        throw new AppError('UNAVAILABLE', 'This server cannot look plans up for the context service', {
          hint: 'give --goal instead of a plan',
        });
      const plan = await this.deps.plans.get(q.planId, principal);
      if (!plan.projects.includes(p.name))
        throw new AppError('INVALID_PARAMS', `Plan ${q.planId} is not on project ${p.name}`, {
          fields: [{ field: 'planId', description: `is a plan on ${plan.projects.join(', ')}` }],
        });
      action = plan.action;
      const argGoal = plan.arguments['goal'];
      if (q.goal === undefined) goal = typeof argGoal === 'string' && argGoal !== '' ? argGoal : plan.description;
      decisions = (plan.decisions ?? [])
        .filter((d) => d.superseded !== true)
        .map((d) =>
          [d.question, typeof d.chosen === 'string' ? d.chosen : JSON.stringify(d.chosen), d.rationale].join('\n'),
        );
    }
    const target: Target = {
      project: p.definition,
      view,
      goal,
      decisions,
      actionInstructions: await this.actionInstructions(action),
      planId: q.planId,
      budget: q.budget,
    };
    const actor = await this.viewActor(p.definition, view);
    if (actor) {
      target.modelWindow = actor.contextWindow;
      target.answerReserve = actor.maxTokens;
    }
    return target;
  }

  /** The instruction files an action names (none for a missing one: the plan keeps going without them). */
  private async actionInstructions(action: string | undefined): Promise<readonly string[]> {
    if (action === undefined) return [];
    const e = await this.deps.registry.lookup('action', action);
    return e?.kind === 'action' ? (e.definition.instructions ?? []) : [];
  }

  /** The window and answer size of the actor the view is for (strategy actor for strategize/default, execution actor otherwise). */
  private async viewActor(
    project: ProjectDefinition,
    view: ContextView,
  ): Promise<{ contextWindow?: number | undefined; maxTokens?: number | undefined } | undefined> {
    const s = project.settings;
    const name =
      view === 'execute' || view === 'apply'
        ? (s?.executionActor ?? s?.strategyActor)
        : (s?.strategyActor ?? s?.executionActor);
    if (name === undefined) return undefined;
    const e = await this.deps.registry.lookup('actor', name);
    if (e?.kind !== 'actor') return undefined;
    const d = e.definition;
    return { contextWindow: d.contextWindow, maxTokens: d.maxTokens };
  }

  private async run(
    t: Target,
    mode: { dryRun: boolean; wantText: boolean; signal?: AbortSignal | undefined },
  ): Promise<AssembledContext> {
    const ctx = t.project.settings?.context;
    const { settings } = effectiveSettings(ctx, t.view);
    const pools = await this.pools(t.project, settings, mode.signal);
    const budget = budgetOf(ctx, t, settings);
    const { out, instructions } = await this.fill(t, pools, settings, budget.available, mode);
    return {
      project: t.project.name,
      view: t.view,
      goal: t.goal,
      ...(t.planId !== undefined ? { planId: t.planId } : {}),
      settings,
      budget: { ...budget, used: out.totals.includedTokens + instructions.used },
      inventory: pools.map((p) => ({
        resource: p.resource,
        files: p.listing.files.length,
        bytes: p.listing.files.reduce((n, f) => n + f.bytes, 0),
      })),
      instructions: instructions.files,
      files: out.files,
      cut: out.cut,
      totals: out.totals,
      snapshot: withInstructions(out.snapshot, instructions),
      dryRun: mode.dryRun,
      instructionFragments: instructions.fragments,
      fragments: out.fragments,
    };
  }

  /**
   * The instruction files and the files, from one budget. The instructions the goal and the
   * decisions bring into play (and the roots' and named ones) are chosen first and the files fill
   * what they leave; the folders' of the files then selected come next, in what the files leave.
   * When those do not fit, the files are chosen again with room for them (once), and the
   * instructions then fill what those files leave: together they never pass the budget.
   */
  private async fill(
    t: Target,
    pools: Pool[],
    settings: EffectiveContextSettings,
    available: number,
    mode: { dryRun: boolean; wantText: boolean; signal?: AbortSignal | undefined },
  ): Promise<{ out: AssemblyOutcome; instructions: InstructionSelection }> {
    const files = (room: number): Promise<AssemblyOutcome> =>
      this.assembler.assemble({
        pools,
        settings,
        goal: t.goal,
        decisions: t.decisions,
        available: room,
        dryRun: mode.dryRun,
        wantText: mode.wantText,
        signal: mode.signal,
      });
    if (!settings.instructions.enabled)
      return { out: await files(available), instructions: { files: [], fragments: [], used: 0, considered: 0 } };
    const instr = new Instructions(
      {
        pools,
        settings: settings.instructions,
        actionFiles: t.actionInstructions,
        named: pathsNamed([t.goal, ...t.decisions]),
        dryRun: mode.dryRun,
      },
      this.deps.inventory,
      this.deps.tokens,
      this.instructionReads,
    );
    instr.markPools();
    const first = await instr.select([], available, mode.signal);
    let out = await files(available - first.used);
    const inPlay = (o: AssemblyOutcome): RankedFile[] => o.files.filter((f) => f.included);
    const ranked = inPlay(out);
    let chosen = await instr.select(ranked, available - out.totals.includedTokens, mode.signal);
    if (chosen.considered > first.considered) {
      const wanted = await instr.select(ranked, available, mode.signal);
      if (chosen.used < wanted.used) {
        // The best files' folders stay in play even when the files chosen with room for them differ.
        out = await files(available - wanted.used);
        chosen = await instr.select([...ranked, ...inPlay(out)], available - out.totals.includedTokens, mode.signal);
      }
    }
    return { out, instructions: chosen };
  }

  private async pools(project: ProjectDefinition, s: EffectiveContextSettings, signal?: AbortSignal): Promise<Pool[]> {
    const names = [...new Set(project.resources)].sort();
    const pools: Pool[] = [];
    let offset = 0;
    for (const name of names) {
      const e = await this.deps.registry.use('resource', name);
      if (e?.kind !== 'resource')
        throw new AppError('INVALID_STATE', `Project ${project.name} names resource ${name}, which does not exist`, {
          details: { project: project.name, resource: name },
          hint: `add the resource again, or change the project's resources with \`agents project update ${project.name}\``,
        });
      // A git-remote has no directory here until a plan clones it into its sandbox: nothing to index.
      if (e.definition.type === 'git-remote') continue;
      const root = e.definition.path;
      // History is read by its own git process while the listing is made.
      const [listing, recency] = await Promise.all([
        this.deps.inventory.list(root, signal),
        s.ranking.includes('recency') ? this.deps.inventory.recency(root) : undefined,
      ]);
      signal?.throwIfAborted();
      const index = listingIndex(listing.files);
      const status = candidateStatus(index, s, () => this.deps.inventory.globFilter(s.include, s.exclude));
      pools.push({ resource: name, root, listing, index, status, offset, recency });
      offset += listing.files.length;
    }
    return pools;
  }
}

/**
 * Plans → ACP, as pure functions: the slash commands a session offers, a plan's decisions as ACP
 * plan entries whose status follows the execution, a plan's approval as permission options and
 * the editor's choice as the plan's answer, and a plan's diff as ACP diff content.
 */
import { isAbsolute, join } from 'node:path';
import type {
  AvailableCommand,
  PermissionOption,
  PlanEntry,
  PlanEntryStatus,
  RequestPermissionOutcome,
  SessionUpdate,
  ToolCallContent,
} from '@agentclientprotocol/sdk';
import {
  applyHunks,
  diffPath,
  fileUnified,
  type ApprovalAnswer,
  type ApprovalRequest,
  type DiffFile,
} from '../../protocol/client/index.ts';
import { chosenText, type Decision } from '../cli/render/plan.render.ts';
import { answerOf, permissionOptions } from './acp-approval.ts';
import { CHAT_COMMAND_NAMES, CHAT_COMMANDS, type ChatCommandName } from './chat-commands.ts';

/** The plan operations a prompt can start with; the rest of its text is the argument. */
export const PLAN_COMMANDS = ['plan', 'execute', 'diff', 'apply', 'cancel'] as const;
export type PlanCommandName = (typeof PLAN_COMMANDS)[number];

const PLAN_AVAILABLE: readonly AvailableCommand[] = [
  {
    name: 'plan',
    description: "Make a plan from a goal on this session's project (strategized, not executed yet)",
    input: { hint: 'the goal, e.g. fix the failing date test' },
  },
  { name: 'execute', description: "Execute the session's plan in a sandbox (the project is not changed yet)" },
  {
    name: 'diff',
    description:
      "Show the changes the session's plan made in its sandbox; without a plan (or with a turn number), what the chat's turns changed",
  },
  { name: 'apply', description: "Apply the session's plan to the project (asks first; commits the changes)" },
  { name: 'cancel', description: "Cancel the session's plan" },
];

/** Every command a session offers: the plan operations, then the chat's own (chat-commands.ts). */
export const AVAILABLE_COMMANDS: readonly AvailableCommand[] = [...PLAN_AVAILABLE, ...CHAT_COMMANDS];

/** What a command's argument is, in the list an unknown command is answered with. */
const ARGUMENT: Readonly<Record<string, string>> = {
  plan: ' <goal>',
  diff: ' [turn]',
  model: ' [actor]',
  undo: ' [turn]',
  compact: ' [keep]',
};

export type SlashCommand =
  | { kind: 'plan-command'; name: PlanCommandName; arg: string }
  | { kind: 'chat-command'; name: ChatCommandName; arg: string }
  | { kind: 'unknown'; name: string }
  | undefined;

/**
 * A prompt's text as a slash command (`/word rest`), or undefined when it is no command (a chat
 * turn). `/diff` is the plan's here; the bridge gives it to the chat when there is no plan or a
 * turn number.
 */
export function slashCommandOf(text: string): SlashCommand {
  const m = /^\s*\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text);
  if (!m) return undefined;
  const name = (m[1] ?? '').toLowerCase();
  const arg = (m[2] ?? '').trim();
  const plan = PLAN_COMMANDS.find((c) => c === name);
  if (plan) return { kind: 'plan-command', name: plan, arg };
  const chat = CHAT_COMMAND_NAMES.find((c) => c === name);
  return chat ? { kind: 'chat-command', name: chat, arg } : { kind: 'unknown', name: m[1] ?? '' };
}

/** What an unknown slash command is told: the commands there are. */
export function unknownCommandText(name: string): string {
  const list = AVAILABLE_COMMANDS.map((c) => `/${c.name}${ARGUMENT[c.name] ?? ''}`).join(', ');
  // `agents chat`'s /clear: in an editor a new session is the editor's own (a new thread).
  const clear = name.toLowerCase() === 'clear' ? ' A new session is started by the editor (a new thread).' : '';
  return `/${name} is not a command here.${clear} The commands are: ${list}. Text that does not start with a command is sent to the actor.\n`;
}

/** A decision of the plan, in the words of a plan entry. */
export function entryText(d: Decision): string {
  return d.type === 'choice' && d.question ? `${d.question} → ${chosenText(d.chosen)}` : chosenText(d.chosen);
}

/**
 * The plan's entries (its decisions, in order) and their statuses: before execute all pending;
 * while it runs, the ones before the progress completed and the next in progress; all completed
 * when the phase completes. A failed step's entry stays in progress (ACP has no failed entry).
 */
export class PlanEntries {
  private statuses: PlanEntryStatus[];

  private readonly texts: readonly string[];

  constructor(texts: readonly string[]) {
    this.texts = texts;
    this.statuses = texts.map(() => 'pending');
  }

  get size(): number {
    return this.texts.length;
  }

  /** The `plan` update as the entries are now. */
  update(): SessionUpdate {
    const entries: PlanEntry[] = this.texts.map((content, i) => ({
      content,
      priority: 'medium',
      status: this.statuses[i] ?? 'pending',
    }));
    return { sessionUpdate: 'plan', entries };
  }

  /** Progress of the execute phase; an update when an entry's status changed. */
  progress(phase: string, state: string, stepsDone: number | undefined): SessionUpdate | undefined {
    if (phase !== 'execute' && phase !== 'apply') return undefined;
    const n = this.texts.length;
    const done = phase === 'apply' || (phase === 'execute' && state === 'complete');
    const next = done ? n : Math.min(stepsDone ?? 0, n - 1);
    const statuses = this.texts.map((_, i): PlanEntryStatus => {
      if (i < next) return 'completed';
      if (i === next && state !== 'complete') return 'in_progress';
      return 'pending';
    });
    if (statuses.every((s, i) => s === this.statuses[i])) return undefined;
    this.statuses = statuses;
    return this.update();
  }
}

/** Allow or reject this one: what every plan approval (and the bridge's own apply question) offers. */
export const ONCE: readonly PermissionOption[] = permissionOptions(['approve', 'reject']).filter(
  (o) => o.kind === 'allow_once' || o.kind === 'reject_once',
);

/**
 * The options a plan's approval offers: allow or reject this call, and — where the plan's run
 * offers it (a tool call of a plan from a goal) — allow it and the later calls like it in this
 * run, which the plan remembers (plan/approve `always`). No "always reject": a plan has none.
 */
export function planPermissionOptions(request: ApprovalRequest): PermissionOption[] {
  const always = request.kind === 'tool-call' && request.options?.includes('always') === true;
  const [allow, reject] = ONCE;
  return [
    ...(allow ? [allow] : []),
    ...(always
      ? [
          {
            optionId: 'allow_always',
            name: 'Always allow calls like this in this plan run',
            kind: 'allow_always' as const,
          },
        ]
      : []),
    ...(reject ? [reject] : []),
  ];
}

/**
 * The editor's choice as the plan's answer; undefined when it was cancelled. "Always" covers the
 * same command (its program and subcommand) when the call runs one, else the same tool — the
 * plan's rule, as `agents plan approve --always` makes it.
 */
export function planAnswerOf(outcome: RequestPermissionOutcome): ApprovalAnswer | undefined {
  const a = answerOf(outcome);
  if ('cancelled' in a) return undefined;
  return a.decision === 'approve' && a.always ? { decision: 'approve', always: 'command' } : { decision: a.decision };
}

/**
 * The diff of each file (`plan/diff`'s structured files) as ACP content: `diff` (absolute path,
 * old and new text) when the old text is known and the hunks fit it; the file's unified diff as
 * text otherwise.
 */
export function diffContent(
  files: readonly DiffFile[],
  root: string | undefined,
  oldTextOf: (absolutePath: string) => string | undefined,
): ToolCallContent[] {
  return files.map((f): ToolCallContent => {
    const at = (rel: string | null): string | undefined =>
      root && rel !== null && !isAbsolute(rel) ? join(root, rel) : undefined;
    const path = at(diffPath(f));
    const oldPath = at(f.oldPath);
    const old = path === undefined ? undefined : f.oldPath === null ? '' : oldPath && oldTextOf(oldPath);
    const next = old === undefined ? undefined : f.newPath === null ? '' : applyHunks(old, f, true);
    if (path === undefined || old === undefined || next === undefined || f.binary)
      return { type: 'content', content: { type: 'text', text: fileUnified(f) } };
    return { type: 'diff', path, oldText: f.oldPath === null ? null : old, newText: next };
  });
}

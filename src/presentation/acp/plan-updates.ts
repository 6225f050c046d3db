/**
 * Plans → ACP, as pure functions: the slash commands a session offers, a plan's decisions as ACP
 * plan entries whose status follows the execution, and a plan's diff as ACP diff content.
 */
import { isAbsolute, join } from 'node:path';
import type {
  AvailableCommand,
  PlanEntry,
  PlanEntryStatus,
  SessionUpdate,
  ToolCallContent,
} from '@agentclientprotocol/sdk';
import { chosenText, type Decision } from '../cli/render/plan.ts';

/** The plan operations a prompt can start with; the rest of its text is the argument. */
export const PLAN_COMMANDS = ['plan', 'execute', 'diff', 'apply', 'cancel'] as const;
export type PlanCommandName = (typeof PLAN_COMMANDS)[number];

export const AVAILABLE_COMMANDS: readonly AvailableCommand[] = [
  {
    name: 'plan',
    description: "Make a plan from a goal on this session's project (strategized, not executed yet)",
    input: { hint: 'the goal, e.g. fix the failing date test' },
  },
  { name: 'execute', description: "Execute the session's plan in a sandbox (the project is not changed yet)" },
  { name: 'diff', description: "Show the changes the session's plan made in its sandbox" },
  { name: 'apply', description: "Apply the session's plan to the project (asks first; commits the changes)" },
  { name: 'cancel', description: "Cancel the session's plan" },
];

export type SlashCommand =
  { kind: 'plan-command'; name: PlanCommandName; arg: string } | { kind: 'unknown'; name: string } | undefined;

/** A prompt's text as a slash command (`/word rest`), or undefined when it is no command (a chat turn). */
export function slashCommandOf(text: string): SlashCommand {
  const m = /^\s*\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text);
  if (!m) return undefined;
  const name = m[1] ?? '';
  const arg = (m[2] ?? '').trim();
  const known = PLAN_COMMANDS.find((c) => c === name.toLowerCase());
  return known ? { kind: 'plan-command', name: known, arg } : { kind: 'unknown', name };
}

/** What an unknown slash command is told: the commands there are. */
export function unknownCommandText(name: string): string {
  const list = AVAILABLE_COMMANDS.map((c) => `/${c.name}${c.input ? ' <goal>' : ''}`).join(', ');
  return `/${name} is not a command here. The commands are: ${list}. Text that does not start with a command is sent to the actor.\n`;
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

/** One file of a unified diff: its path (relative to the resource) and its hunks. */
export interface FilePatch {
  path: string;
  /** The file is new (`--- /dev/null`) or deleted (`+++ /dev/null`). */
  added: boolean;
  deleted: boolean;
  hunks: Hunk[];
  /** The file's part of the diff text, for when its texts cannot be built. */
  text: string;
}

interface Hunk {
  oldStart: number;
  lines: string[];
}

/** A `git diff` output split by file. */
export function parseUnified(unified: string): FilePatch[] {
  const out: FilePatch[] = [];
  let cur: FilePatch | undefined;
  let hunk: Hunk | undefined;
  for (const line of unified.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const path = /^diff --git a\/(.+?) b\/(.+)$/.exec(line)?.[2] ?? '';
      cur = { path, added: false, deleted: false, hunks: [], text: '' };
      hunk = undefined;
      out.push(cur);
    }
    if (!cur) continue;
    cur.text += `${line}\n`;
    if (hunk === undefined && line.startsWith('--- ')) cur.added = line === '--- /dev/null';
    else if (hunk === undefined && line.startsWith('+++ ')) cur.deleted = line === '+++ /dev/null';
    else if (line.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(line);
      hunk = { oldStart: Number(m?.[1] ?? 0), lines: [] };
      cur.hunks.push(hunk);
    } else if (hunk && /^[ +\-\\]/.test(line)) hunk.lines.push(line);
  }
  return out;
}

/** The file after the patch, or undefined when the patch does not fit `old` (then only the diff text is shown). */
export function applyPatch(old: string, patch: FilePatch): string | undefined {
  const src = old === '' ? [] : old.split('\n');
  const out: string[] = [];
  let at = 0;
  // git marks a last line without a newline with `\`: after a `+` line the new text lacks it, after
  // a `-` line only the old text did (so the new one, built from the old lines, must get it back).
  let newLacks = false;
  let oldLacked = old === '';
  let prev = '';
  for (const h of patch.hunks) {
    const start = Math.max(h.oldStart - 1, 0);
    if (start < at || start > src.length) return undefined;
    out.push(...src.slice(at, start));
    at = start;
    for (const l of h.lines) {
      if (l.startsWith('\\')) {
        if (prev === '+') newLacks = true;
        else if (prev === '-') oldLacked = true;
        else newLacks = oldLacked = true;
        continue;
      }
      prev = l[0] ?? '';
      const body = l.slice(1);
      if (prev === '+') out.push(body);
      else {
        if (src[at] !== body) return undefined;
        at++;
        if (prev === ' ') out.push(body);
      }
    }
  }
  out.push(...src.slice(at));
  const text = out.join('\n');
  if (newLacks) return text.endsWith('\n') ? text.slice(0, -1) : text;
  return oldLacked && out.length > 0 && !text.endsWith('\n') ? `${text}\n` : text;
}

/**
 * The diff of each file as ACP content: `diff` (absolute path, old and new text) when the old
 * text is known and the patch fits it; the file's unified diff as text otherwise.
 */
export function diffContent(
  patches: readonly FilePatch[],
  root: string | undefined,
  oldTextOf: (absolutePath: string) => string | undefined,
): ToolCallContent[] {
  return patches.map((p): ToolCallContent => {
    const path = root && !isAbsolute(p.path) ? join(root, p.path) : undefined;
    const old = path === undefined ? undefined : p.added ? '' : oldTextOf(path);
    const next = old === undefined ? undefined : p.deleted ? '' : applyPatch(old, p);
    if (path === undefined || old === undefined || next === undefined)
      return { type: 'content', content: { type: 'text', text: p.text } };
    return { type: 'diff', path, oldText: p.added ? null : old, newText: next };
  });
}

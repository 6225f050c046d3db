import {
  fallbackLine,
  fallbacksOf,
  type Artifact,
  type Message,
  type Part,
  type Task,
  type TaskState,
} from '../../../protocol/client/index.ts';
import type { Palette } from './colors.ts';
import { renderFields } from './table.ts';

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`: the word people type and read. */
export const stateWord = (s: string): string =>
  s
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');

/** The states a user can filter by, as words, and the wire enum of each. */
export const STATE_WORDS: Record<string, TaskState> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
};

const UNSUCCESSFUL: ReadonlySet<string> = new Set(['TASK_STATE_FAILED', 'TASK_STATE_REJECTED', 'TASK_STATE_CANCELED']);
const TERMINAL: ReadonlySet<string> = new Set([...UNSUCCESSFUL, 'TASK_STATE_COMPLETED']);

export const isTerminalState = (s: string): boolean => TERMINAL.has(s);
/** Failed, rejected or canceled: the commands that wait for a task exit non-zero on these. */
export const isUnsuccessfulState = (s: string): boolean => UNSUCCESSFUL.has(s);
/** The task waits for the user (input- or auth-required). */
export const isInterruptedState = (s: string): boolean =>
  s === 'TASK_STATE_INPUT_REQUIRED' || s === 'TASK_STATE_AUTH_REQUIRED';

export function styleState(s: string, pal: Palette): string {
  const word = stateWord(s);
  if (s === 'TASK_STATE_COMPLETED') return pal.green(word);
  if (UNSUCCESSFUL.has(s)) return pal.red(word);
  if (isInterruptedState(s)) return pal.yellow(word);
  return pal.cyan(word);
}

/** The text of a list of parts; other parts are named, not dumped. */
export function partsText(parts: readonly Part[]): string {
  return parts
    .map((p) => {
      if (p.text !== undefined) return p.text;
      if (p.data !== undefined) return JSON.stringify(p.data);
      if (p.url !== undefined) return `[file ${p.filename ?? p.url}]`;
      return `[${p.mediaType ?? 'binary'} ${p.filename ?? 'part'}]`;
    })
    .join('');
}

export const messageText = (m: Message | undefined): string | undefined => (m ? partsText(m.parts) : undefined);

/** Only the words of a message (its data parts, e.g. an approval request, left out). */
export const messageWords = (m: Message | undefined): string | undefined =>
  m ? partsText(m.parts.filter((p) => p.text !== undefined)) || undefined : undefined;

/** All the agent's answer: every artifact's text, one artifact per paragraph (tool calls and hook runs left out). */
export const artifactsText = (artifacts: readonly Artifact[] | undefined): string =>
  (artifacts ?? [])
    .filter((a) => !isToolCallArtifact(a) && !isHookArtifact(a))
    .map((a) => partsText(a.parts))
    .join('\n');

/** An LLM actor's tool call, as it reports it: a `tool-call` artifact with one data part. */
export interface ToolCallView {
  tool: string;
  arguments?: unknown;
  state: string;
  ok?: boolean;
  summary?: string;
  durationMs?: number;
  /** Paths (relative to the project's resource) the call changed. */
  filesTouched?: string[];
}

export const isToolCallArtifact = (a: Artifact): boolean => a.name === 'tool-call';

export function toolCallOf(a: Artifact): ToolCallView | undefined {
  if (!isToolCallArtifact(a)) return undefined;
  const d = a.parts[0]?.data;
  if (!d || typeof d !== 'object' || typeof (d as { tool?: unknown }).tool !== 'string') return undefined;
  return d as ToolCallView;
}

/** What a tool call does, shortly: `builtin/read-file path=a.txt` (file contents left out). */
export function toolCallTitle(c: Pick<ToolCallView, 'tool' | 'arguments'>): string {
  const args =
    c.arguments && typeof c.arguments === 'object'
      ? Object.entries(c.arguments as Record<string, unknown>)
          .filter(([k]) => k !== 'content')
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ')
      : typeof c.arguments === 'string'
        ? c.arguments
        : '';
  const shown = args.length > 100 ? `${args.slice(0, 97)}…` : args;
  return `${c.tool}${shown ? ` ${shown}` : ''}`;
}

/** A tool call on one line: `→ builtin/read-file path=a.txt` while it runs, `✓`/`✗` with its summary after. */
export function toolCallLine(c: ToolCallView): string {
  if (c.state === 'running') return `→ ${toolCallTitle(c)}`;
  const mark = c.ok ? '✓' : '✗';
  const ms = c.durationMs !== undefined ? ` (${c.durationMs} ms)` : '';
  return `${mark} ${c.tool} ${c.state}${ms}${c.summary ? `: ${c.summary}` : ''}`;
}

/** A hook run kept on a task: a `hook` artifact with one data part. */
export interface HookRunView {
  hook: string;
  event: string;
  tool?: string;
  decision: string;
  reason?: string;
  durationMs?: number;
}

export const isHookArtifact = (a: Artifact): boolean => a.name === 'hook';

export function hookRunOf(a: Artifact): HookRunView | undefined {
  if (!isHookArtifact(a)) return undefined;
  const d = a.parts[0]?.data;
  if (!d || typeof d !== 'object' || typeof (d as { hook?: unknown }).hook !== 'string') return undefined;
  return d as HookRunView;
}

/** `hook local/guard before-tool-call builtin/write-file: deny (12 ms): not on Fridays`. */
export function hookRunLine(r: HookRunView): string {
  const ms = r.durationMs !== undefined ? ` (${r.durationMs} ms)` : '';
  return `hook ${r.hook} ${r.event}${r.tool ? ` ${r.tool}` : ''}: ${r.decision}${ms}${r.reason ? `: ${r.reason}` : ''}`;
}

/** Token usage an LLM turn keeps on its task (`metadata.usage`). */
export interface UsageView {
  actor?: string;
  model?: string;
  inputTokens: number;
  outputTokens: number;
  /** Of the input tokens, those read from / written to the provider's prompt cache (when reported). */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  steps?: number;
  toolCalls?: number;
  cost?: { amount: number; currency: string };
}

export function usageOf(task: Task | undefined): UsageView | undefined {
  const u = task?.metadata?.['usage'];
  if (!u || typeof u !== 'object') return undefined;
  const v = u as Partial<UsageView>;
  return typeof v.inputTokens === 'number' && typeof v.outputTokens === 'number' ? (v as UsageView) : undefined;
}

/** `812 in (700 cache read, 90 cache write) / 96 out tokens · 2 tool calls · 0.0012 USD`. */
export function usageLine(u: UsageView): string {
  const cache = [
    u.cacheReadTokens ? `${u.cacheReadTokens} cache read` : '',
    u.cacheWriteTokens ? `${u.cacheWriteTokens} cache write` : '',
  ].filter(Boolean);
  const input = `${u.inputTokens} in${cache.length ? ` (${cache.join(', ')})` : ''}`;
  const calls = u.toolCalls ? ` · ${u.toolCalls} tool call${u.toolCalls === 1 ? '' : 's'}` : '';
  const cost = u.cost ? ` · ${u.cost.amount.toFixed(4)} ${u.cost.currency}` : '';
  return `${input} / ${u.outputTokens} out tokens${calls}${cost}`;
}

/** `answered by local/b after local/a: rate limited (429)` when the turn fell back; undefined otherwise. */
export function fallbackOf(task: Task | undefined): string | undefined {
  return fallbackLine(fallbacksOf(task?.metadata), task?.status.state === 'TASK_STATE_COMPLETED');
}

/** The time of the task's last status change, `YYYY-MM-DD HH:MM:SS` (UTC), for tables. */
export const shortTime = (ts: string | undefined): string => (ts ? ts.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '');

/** Folds one stream event into a task snapshot (the client's: every front end folds alike). */
export { foldEvent } from '../../../protocol/client/index.ts';

/** A task for people: header line, then its fields; plain mode prints `key: value` lines. */
export function renderTask(task: Task, mode: { rich: boolean; pal: Palette }): string {
  const { pal } = mode;
  const history = task.history ?? [];
  const fields: Array<readonly [string, string | undefined]> = [
    ['context', task.contextId],
    ['updated', mode.rich ? shortTime(task.status.timestamp) : task.status.timestamp],
    ['status', messageWords(task.status.message)],
    ['fallback', fallbackOf(task)],
  ];
  const usage = usageOf(task);
  if (usage) fields.push(['usage', usageLine(usage)]);
  for (const a of task.artifacts ?? [])
    fields.push([mode.rich ? (a.name ?? a.artifactId) : `artifact.${a.artifactId}`, partsText(a.parts)]);
  if (history.length > 0) {
    if (mode.rich) fields.push(['history', `${history.length} message${history.length === 1 ? '' : 's'}`]);
    else
      history.forEach((m, i) =>
        fields.push([`history.${i}.${m.role === 'ROLE_USER' ? 'user' : 'agent'}`, partsText(m.parts)]),
      );
  }
  if (!mode.rich) return renderFields([['id', task.id], ['state', stateWord(task.status.state)], ...fields], mode);
  const head = `${pal.bold('Task')} ${task.id}  ${styleState(task.status.state, pal)}\n`;
  return head + renderFields(fields, mode);
}

/** A command's output streamed as an artifact: a chat tool's `tool-output`, a plan step's `command-output`. */
export function isCommandOutput(a: Artifact): boolean {
  return a.name === 'tool-output' || a.name === 'command-output';
}

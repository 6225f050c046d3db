/**
 * Hooks (issue #17): commands or webhooks that run on events around an actor's work — before a
 * tool call (and may veto it), after one, on a plan's phase change, before and after apply. The
 * definition is a registry kind; what a run decided, and what is kept of it, are pure functions here.
 */
import { z } from 'zod';
import { patternMatches } from '../plan/policy.ts';
import { EntityName } from './names.ts';

export const HOOK_EVENTS = [
  'before-tool-call',
  'after-tool-call',
  'plan-phase',
  'before-apply',
  'after-apply',
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];
/** The events whose hooks may veto what comes next. */
export const VETO_EVENTS: ReadonlySet<HookEventName> = new Set(['before-tool-call', 'before-apply']);
const TOOL_EVENTS: ReadonlySet<HookEventName> = new Set(['before-tool-call', 'after-tool-call']);

/** A hook's time limit when it names none (seconds). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 10;
/** What a hook run keeps of its output (bytes of UTF-8). */
export const HOOK_OUTPUT_BYTES = 4096;

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const HeaderName = z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name');

export const HookCommand = z
  .object({
    program: z.string().min(1, 'is required').max(4096),
    args: z.array(z.string().max(100_000)).max(1000).optional(),
    /** Variables the command sees besides the confined allowlist (never the server's environment). */
    env: z.record(EnvName, z.string()).optional(),
  })
  .strict();

export const HookWebhook = z
  .object({
    url: z
      .string()
      .url('must be an absolute URL')
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL'),
    headers: z.record(HeaderName, z.string()).optional(),
  })
  .strict();

export const HookDefinition = z
  .object({
    name: EntityName,
    description: z.string().max(2000, 'is at most 2000 characters').optional(),
    event: z.enum(HOOK_EVENTS, { message: `must be one of ${HOOK_EVENTS.join(', ')}` }),
    /** The project it runs for (absent: every project of its namespace, and chats without one). */
    project: EntityName.optional(),
    /** Globs of tool refs (`builtin/*`, `local/fmt`); absent: every tool. Tool events only. */
    tools: z.array(z.string().min(1).max(200)).min(1, 'give at least one glob, or leave tools out').max(100).optional(),
    command: HookCommand.optional(),
    webhook: HookWebhook.optional(),
    timeoutSeconds: z
      .number()
      .int('must be an integer')
      .min(1, 'must be between 1 and 600')
      .max(600, 'must be between 1 and 600')
      .optional(),
  })
  .strict()
  .superRefine((h, ctx) => {
    if ((h.command === undefined) === (h.webhook === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'give exactly one of command (a program to run) or webhook (a URL to POST to)',
      });
    if (h.tools !== undefined && !TOOL_EVENTS.has(h.event))
      ctx.addIssue({
        code: 'custom',
        path: ['tools'],
        message: `only before-tool-call and after-tool-call hooks take tools (this one is ${h.event})`,
      });
  });
export type HookDefinition = z.infer<typeof HookDefinition>;

/** Where an event happens: its projects (none: a chat without one) and, for tool events, the tool. */
export interface HookScope {
  event: HookEventName;
  projects: readonly string[];
  tool?: string | undefined;
}

/** Whether the hook runs for this event: its event, its project (or none: global), its tool globs. */
export function hookMatches(h: HookDefinition, s: HookScope): boolean {
  if (h.event !== s.event) return false;
  if (h.project !== undefined && !s.projects.includes(h.project)) return false;
  if (h.tools === undefined) return true;
  const tool = s.tool;
  return tool !== undefined && h.tools.some((g) => patternMatches(g, tool));
}

/** What a hook run said: for a veto event `allow` or `deny`; for the others `ok` or `failed`. */
export type HookDecision = 'allow' | 'deny' | 'ok' | 'failed';

/** How a hook run ended, as the runner saw it. */
export interface HookOutcome {
  /** A command's exit status (null: killed or not started). */
  exitCode?: number | null | undefined;
  /** A webhook's HTTP status. */
  status?: number | undefined;
  /** A command's stdout / a webhook's response body (what a decision is read from). */
  answer: string;
  /** What is kept: a command's stdout and stderr, a webhook's body. */
  output: string;
  /** Set when it did not run to an answer: timeout, crash, unreachable, refused. */
  failure?: string | undefined;
}

/** A `{"decision": "deny" | "allow", "reason": "…"}` answer: the whole text, or its last line. */
export function answerDecision(text: string): { decision: 'allow' | 'deny'; reason?: string } | undefined {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  const lines = trimmed.split('\n');
  for (const candidate of [trimmed, lines[lines.length - 1] ?? '']) {
    let v: unknown;
    try {
      v = JSON.parse(candidate);
    } catch {
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const o = v as { decision?: unknown; reason?: unknown };
    if (o.decision !== 'deny' && o.decision !== 'allow') continue;
    return {
      decision: o.decision,
      ...(typeof o.reason === 'string' && o.reason.trim() ? { reason: o.reason.trim().slice(0, 1000) } : {}),
    };
  }
  return undefined;
}

/**
 * What a run decided. A veto event's hook denies when it says so, exits non-zero (a webhook: a
 * status outside 2xx), or fails to answer at all (fail closed); the reason says which.
 */
export function decideHook(event: HookEventName, o: HookOutcome): { decision: HookDecision; reason?: string } {
  const veto = VETO_EVENTS.has(event);
  if (o.failure !== undefined)
    return veto
      ? { decision: 'deny', reason: `the hook failed, so the ${whatIsVetoed(event)} is refused: ${o.failure}` }
      : { decision: 'failed', reason: o.failure };
  const said = answerDecision(o.answer);
  const badExit = o.exitCode !== undefined && o.exitCode !== 0;
  const badStatus = o.status !== undefined && (o.status < 200 || o.status > 299);
  if (!veto) return badExit || badStatus ? { decision: 'failed', reason: exitText(o) } : { decision: 'ok' };
  if (said?.decision === 'deny') return { decision: 'deny', reason: said.reason ?? 'denied without a reason' };
  if (badExit || badStatus) return { decision: 'deny', reason: lastLine(o.output) ?? exitText(o) };
  return { decision: 'allow' };
}

const whatIsVetoed = (event: HookEventName): string => (event === 'before-apply' ? 'apply' : 'tool call');

function exitText(o: HookOutcome): string {
  return o.status !== undefined ? `it answered HTTP ${o.status}` : `it exited with status ${String(o.exitCode)}`;
}

function lastLine(text: string): string | undefined {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines[lines.length - 1];
  return last ? last.slice(0, 1000) : undefined;
}

/** Text cut to `max` bytes of UTF-8 (never inside a character), and whether it was cut. */
export function truncateBytes(text: string, max = HOOK_OUTPUT_BYTES): { text: string; truncated: boolean } {
  const buf = new TextEncoder().encode(text);
  if (buf.length <= max) return { text, truncated: false };
  let end = max;
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: new TextDecoder().decode(buf.subarray(0, end)), truncated: true };
}

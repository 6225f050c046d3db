/**
 * The A2A v1.0 data model (ProtoJSON form: camelCase fields, SCREAMING_SNAKE enums, oneof parts),
 * as zod schemas. Tasks, messages and artifacts are the domain's own vocabulary: the protocol layer
 * validates against these schemas and the v0.3 codec translates to and from them.
 */
import { z } from 'zod';
import { copyJson } from './json.ts';

// RFC 3339 §5.6 date-time: any offset, 0–9 fractional digits, `T`/`Z` in either case.
const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Milliseconds since the epoch of an RFC 3339 timestamp, or NaN when it is not one (or names a day
 * that does not exist, such as 2026-02-31). Sub-millisecond digits round up, so that `>=` against
 * millisecond-precision stored instants means exactly "at or after" the given instant.
 */
export function parseTimestamp(s: string): number {
  const m = rfc3339.exec(s);
  if (!m) return Number.NaN;
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > days || h > 23 || mi > 59 || sec > 59) return Number.NaN;
  let offset = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return Number.NaN;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const frac = (m[7] ?? '').padEnd(9, '0');
  const nanos = Number(frac);
  const ms = Math.ceil(nanos / 1_000_000);
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, sec, 0);
  return t.getTime() + ms - offset;
}

/** An RFC 3339 timestamp as the canonical UTC form the server stores (`…T08:10:00.124Z`). */
export function toUtcTimestamp(s: string): string {
  return new Date(parseTimestamp(s)).toISOString();
}

/** An RFC 3339 timestamp (A2A §5.6.1): any offset, 0–9 fractional digits. The server writes UTC. */
export const Timestamp = z
  .string()
  .regex(rfc3339, 'must be an RFC 3339 timestamp such as 2026-01-31T12:00:00.000Z or 2026-01-31T13:00:00+01:00')
  .refine((s) => !Number.isNaN(parseTimestamp(s)), 'is not a real date and time');

export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;
export const TaskState = z.enum(TASK_STATES);
export type TaskState = z.infer<typeof TaskState>;

const TERMINAL: ReadonlySet<TaskState> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
const INTERRUPTED: ReadonlySet<TaskState> = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

/** Completed, failed, canceled or rejected: the task accepts nothing more. */
export const isTerminal = (s: TaskState): boolean => TERMINAL.has(s);
/** Input- or auth-required: the task waits for the client. */
export const isInterrupted = (s: TaskState): boolean => INTERRUPTED.has(s);

export const Role = z.enum(['ROLE_USER', 'ROLE_AGENT']);
export type Role = z.infer<typeof Role>;

export const Metadata = z.record(z.string(), z.unknown());
export type Metadata = z.infer<typeof Metadata>;

const base64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** A part carries exactly one of `text`, `raw` (base64), `url` or `data`. */
export const Part = z
  .object({
    text: z.string().optional(),
    raw: z.string().regex(base64, 'must be base64').optional(),
    url: z.string().url().optional(),
    data: z.unknown().optional(),
    metadata: Metadata.optional(),
    filename: z.string().optional(),
    mediaType: z.string().optional(),
  })
  .superRefine((p, ctx) => {
    const set = (['text', 'raw', 'url', 'data'] as const).filter((k) => p[k] !== undefined);
    if (set.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          set.length === 0
            ? 'a part needs exactly one of text, raw, url or data'
            : `a part carries exactly one of text, raw, url or data (got ${set.join(', ')})`,
      });
    }
  });
export type Part = z.infer<typeof Part>;

/**
 * Whether a client's `acceptedOutputModes` (media types, `type/*` and `*\/*` ranges, a bare type; parameters
 * such as `;charset=utf-8` do not matter) accept `mediaType`. No list, or an empty one, accepts
 * anything: A2A leaves the output to the agent then.
 */
export function acceptsMediaType(accepted: readonly string[] | undefined, mediaType: string): boolean {
  if (!accepted || accepted.length === 0) return true;
  const [type] = mediaType.split('/');
  return accepted.some((entry) => {
    const range = (entry.split(';')[0] ?? '').trim().toLowerCase();
    // A bare `text` is how early A2A examples named text output modes.
    return range === '*/*' || range === mediaType || range === `${type}/*` || range === type;
  });
}

export const Message = z.object({
  messageId: z.string().min(1, 'is required'),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  role: Role,
  parts: z.array(Part).min(1, 'at least one part is required'),
  metadata: Metadata.optional(),
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
});
export type Message = z.infer<typeof Message>;

export const Artifact = z.object({
  artifactId: z.string().min(1),
  name: z.string().optional(),
  description: z.string().optional(),
  parts: z.array(Part).min(1),
  metadata: Metadata.optional(),
  extensions: z.array(z.string()).optional(),
});
export type Artifact = z.infer<typeof Artifact>;

export const TaskStatus = z.object({
  state: TaskState,
  message: Message.optional(),
  timestamp: Timestamp.optional(),
});
export type TaskStatus = z.infer<typeof TaskStatus>;

export const Task = z.object({
  id: z.string(),
  contextId: z.string(),
  status: TaskStatus,
  artifacts: z.array(Artifact).optional(),
  history: z.array(Message).optional(),
  metadata: Metadata.optional(),
});
export type Task = z.infer<typeof Task>;

export const TaskStatusUpdateEvent = z.object({
  taskId: z.string(),
  contextId: z.string(),
  status: TaskStatus,
  metadata: Metadata.optional(),
});
export type TaskStatusUpdateEvent = z.infer<typeof TaskStatusUpdateEvent>;

export const TaskArtifactUpdateEvent = z.object({
  taskId: z.string(),
  contextId: z.string(),
  artifact: Artifact,
  append: z.boolean().optional(),
  lastChunk: z.boolean().optional(),
  metadata: Metadata.optional(),
});
export type TaskArtifactUpdateEvent = z.infer<typeof TaskArtifactUpdateEvent>;

/** One item of a stream: exactly one key is set. */
export const StreamResponse = z.union([
  z.object({ task: Task }),
  z.object({ message: Message }),
  z.object({ statusUpdate: TaskStatusUpdateEvent }),
  z.object({ artifactUpdate: TaskArtifactUpdateEvent }),
]);
export type StreamResponse =
  | { task: Task }
  | { message: Message }
  | { statusUpdate: TaskStatusUpdateEvent }
  | { artifactUpdate: TaskArtifactUpdateEvent };

export const AuthenticationInfo = z.object({
  scheme: z.string().min(1, 'is required'),
  credentials: z.string().optional(),
});

export const TaskPushNotificationConfig = z.object({
  tenant: z.string().optional(),
  id: z.string().optional(),
  taskId: z.string().optional(),
  url: z
    .string()
    .url('must be an absolute http(s) URL')
    .refine((u) => /^https?:\/\//i.test(u), 'must use http or https'),
  token: z.string().optional(),
  authentication: AuthenticationInfo.optional(),
});
export type TaskPushNotificationConfig = z.infer<typeof TaskPushNotificationConfig>;

/** A task event as stored in the per-task log; `seq` orders it causally within the task. */
export type TaskEvent =
  | { seq: number; kind: 'status'; event: TaskStatusUpdateEvent }
  | { seq: number; kind: 'artifact'; event: TaskArtifactUpdateEvent };

/**
 * Folds one logged event into a task snapshot (mutating it), exactly as a subscriber sees it: a
 * status message joins the history, once (a snapshot that already holds it is left as it is).
 */
export function applyEvent(task: Task, ev: TaskEvent): void {
  if (ev.kind === 'status') {
    task.status = ev.event.status;
    const message = ev.event.status.message;
    if (message && !task.history?.findLast((m) => m.messageId === message.messageId))
      (task.history ??= []).push(message);
    return;
  }
  const { artifact, append } = ev.event;
  const artifacts = (task.artifacts ??= []);
  const existing = artifacts.find((a) => a.artifactId === artifact.artifactId);
  if (append && existing) {
    existing.parts.push(...artifact.parts);
    if (artifact.metadata) existing.metadata = { ...existing.metadata, ...artifact.metadata };
  } else if (existing) {
    Object.assign(existing, copyJson(artifact));
  } else {
    artifacts.push(copyJson(artifact));
  }
}

/** The plain text of a message's text parts, joined by newlines. */
export function textOf(parts: readonly Part[]): string {
  return parts
    .map((p) => p.text)
    .filter((t): t is string => t !== undefined)
    .join('\n');
}

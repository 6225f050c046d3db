/**
 * A2A v0.3 ⇄ v1.0 translation: v0.3 peers speak `kind`-tagged objects, kebab-case states and
 * lower-case roles; everything inside runs on the v1.0 model.
 */
import { z } from 'zod';
import {
  isInterrupted,
  isTerminal,
  type Artifact,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  type TaskState,
  type TaskStatus,
} from '../../domain/a2a.model.ts';

const Meta = z.record(z.string(), z.unknown());

const V03_STATES = [
  'submitted',
  'working',
  'input-required',
  'completed',
  'canceled',
  'failed',
  'rejected',
  'auth-required',
] as const;
export const V03State = z.enum(V03_STATES);

export const stateToV03 = (s: TaskState): string => s.replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
export const stateFromV03 = (s: string): TaskState => `TASK_STATE_${s.toUpperCase().replace('-', '_')}` as TaskState;

const V03File = z
  .object({
    bytes: z.string().optional(),
    uri: z.string().optional(),
    mimeType: z.string().optional(),
    name: z.string().optional(),
  })
  .refine((f) => (f.bytes === undefined) !== (f.uri === undefined), 'a file needs exactly one of bytes or uri');

export const V03Part = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text'), text: z.string(), metadata: Meta.optional() }),
  z.object({ kind: z.literal('file'), file: V03File, metadata: Meta.optional() }),
  z.object({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()), metadata: Meta.optional() }),
]);
type V03Part = z.infer<typeof V03Part>;

export const V03Message = z.object({
  kind: z.literal('message').optional(),
  messageId: z.string().min(1, 'is required'),
  role: z.enum(['user', 'agent']),
  parts: z.array(V03Part).min(1, 'at least one part is required'),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  metadata: Meta.optional(),
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
});
type V03Message = z.infer<typeof V03Message>;

export const V03PushConfig = z.object({
  id: z.string().optional(),
  url: z.string().url('must be an absolute http(s) URL'),
  token: z.string().optional(),
  authentication: z.object({ schemes: z.array(z.string()), credentials: z.string().optional() }).optional(),
});
type V03PushConfig = z.infer<typeof V03PushConfig>;

export const V03MessageSendParams = z.object({
  message: V03Message,
  configuration: z
    .object({
      acceptedOutputModes: z.array(z.string()).optional(),
      historyLength: z.number().int().nonnegative().optional(),
      pushNotificationConfig: V03PushConfig.optional(),
      blocking: z.boolean().optional(),
    })
    .optional(),
  metadata: Meta.optional(),
});

export const V03TaskQuery = z.object({
  id: z.string().min(1, 'is required'),
  historyLength: z.number().int().nonnegative().optional(),
  metadata: Meta.optional(),
});
export const V03TaskId = z.object({ id: z.string().min(1, 'is required'), metadata: Meta.optional() });
export const V03TaskPushConfig = z.object({
  taskId: z.string().min(1, 'is required'),
  pushNotificationConfig: V03PushConfig,
});
export const V03GetPushConfig = z.object({
  id: z.string().min(1, 'is required'),
  pushNotificationConfigId: z.string().optional(),
  metadata: Meta.optional(),
});
export const V03DeletePushConfig = z.object({
  id: z.string().min(1, 'is required'),
  pushNotificationConfigId: z.string().min(1, 'is required'),
  metadata: Meta.optional(),
});

// ---- v0.3 -> v1.0 -------------------------------------------------------------------------

function partFromV03(p: V03Part): Part {
  const out: Part =
    p.kind === 'text'
      ? { text: p.text }
      : p.kind === 'data'
        ? { data: p.data }
        : p.file.bytes !== undefined
          ? { raw: p.file.bytes }
          : { url: p.file.uri ?? '' };
  if (p.kind === 'file') {
    if (p.file.mimeType) out.mediaType = p.file.mimeType;
    if (p.file.name) out.filename = p.file.name;
  }
  if (p.metadata) out.metadata = p.metadata;
  return out;
}

export function messageFromV03(m: V03Message): Message {
  const out: Message = {
    messageId: m.messageId,
    role: m.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: m.parts.map(partFromV03),
  };
  if (m.contextId) out.contextId = m.contextId;
  if (m.taskId) out.taskId = m.taskId;
  if (m.metadata) out.metadata = m.metadata;
  if (m.extensions) out.extensions = m.extensions;
  if (m.referenceTaskIds) out.referenceTaskIds = m.referenceTaskIds;
  return out;
}

export function pushConfigFromV03(taskId: string, c: V03PushConfig): TaskPushNotificationConfig {
  const out: TaskPushNotificationConfig = { taskId, url: c.url };
  if (c.id) out.id = c.id;
  if (c.token) out.token = c.token;
  if (c.authentication) {
    out.authentication = { scheme: c.authentication.schemes[0] ?? 'Bearer' };
    if (c.authentication.credentials) out.authentication.credentials = c.authentication.credentials;
  }
  return out;
}

// ---- v1.0 -> v0.3 -------------------------------------------------------------------------

function partToV03(p: Part): Record<string, unknown> {
  const meta = p.metadata ? { metadata: p.metadata } : {};
  if (p.text !== undefined) return { kind: 'text', text: p.text, ...meta };
  if (p.data !== undefined) {
    const data = typeof p.data === 'object' && p.data !== null && !Array.isArray(p.data) ? p.data : { value: p.data };
    return { kind: 'data', data, ...meta };
  }
  const file: Record<string, unknown> = p.raw !== undefined ? { bytes: p.raw } : { uri: p.url };
  if (p.mediaType) file['mimeType'] = p.mediaType;
  if (p.filename) file['name'] = p.filename;
  return { kind: 'file', file, ...meta };
}

export function messageToV03(m: Message): Record<string, unknown> {
  const out: Record<string, unknown> = {
    kind: 'message',
    messageId: m.messageId,
    role: m.role === 'ROLE_USER' ? 'user' : 'agent',
    parts: m.parts.map(partToV03),
  };
  for (const k of ['contextId', 'taskId', 'metadata', 'extensions', 'referenceTaskIds'] as const)
    if (m[k] !== undefined) out[k] = m[k];
  return out;
}

function statusToV03(s: TaskStatus): Record<string, unknown> {
  const out: Record<string, unknown> = { state: stateToV03(s.state) };
  if (s.message) out['message'] = messageToV03(s.message);
  if (s.timestamp) out['timestamp'] = s.timestamp;
  return out;
}

function artifactToV03(a: Artifact): Record<string, unknown> {
  const out: Record<string, unknown> = { artifactId: a.artifactId, parts: a.parts.map(partToV03) };
  for (const k of ['name', 'description', 'metadata', 'extensions'] as const) if (a[k] !== undefined) out[k] = a[k];
  return out;
}

export function taskToV03(t: Task): Record<string, unknown> {
  const out: Record<string, unknown> = {
    kind: 'task',
    id: t.id,
    contextId: t.contextId,
    status: statusToV03(t.status),
  };
  if (t.artifacts) out['artifacts'] = t.artifacts.map(artifactToV03);
  if (t.history) out['history'] = t.history.map(messageToV03);
  if (t.metadata) out['metadata'] = t.metadata;
  return out;
}

export function sendResultToV03(r: { task: Task } | { message: Message }): Record<string, unknown> {
  return 'task' in r ? taskToV03(r.task) : messageToV03(r.message);
}

export function streamResponseToV03(r: StreamResponse): Record<string, unknown> {
  if ('task' in r) return taskToV03(r.task);
  if ('message' in r) return messageToV03(r.message);
  if ('statusUpdate' in r) {
    const e = r.statusUpdate;
    const out: Record<string, unknown> = {
      kind: 'status-update',
      taskId: e.taskId,
      contextId: e.contextId,
      status: statusToV03(e.status),
      final: isTerminal(e.status.state) || isInterrupted(e.status.state),
    };
    if (e.metadata) out['metadata'] = e.metadata;
    return out;
  }
  const e = r.artifactUpdate;
  const out: Record<string, unknown> = {
    kind: 'artifact-update',
    taskId: e.taskId,
    contextId: e.contextId,
    artifact: artifactToV03(e.artifact),
  };
  if (e.append !== undefined) out['append'] = e.append;
  if (e.lastChunk !== undefined) out['lastChunk'] = e.lastChunk;
  if (e.metadata) out['metadata'] = e.metadata;
  return out;
}

export function pushConfigToV03(c: TaskPushNotificationConfig): Record<string, unknown> {
  const inner: Record<string, unknown> = { url: c.url };
  if (c.id) inner['id'] = c.id;
  if (c.token) inner['token'] = c.token;
  if (c.authentication) {
    const auth: Record<string, unknown> = { schemes: [c.authentication.scheme] };
    if (c.authentication.credentials) auth['credentials'] = c.authentication.credentials;
    inner['authentication'] = auth;
  }
  return { taskId: c.taskId, pushNotificationConfig: inner };
}

/** A2A JSON-RPC requests the bench sends, and the checks every answer must pass. */
import { randomUUID } from 'node:crypto';
import { BENCH_TOKEN, SEND_TEXT } from '../servers/workload.ts';
import { postBytes, RawConnection, SseParser, type RawResponse } from './http-client.ts';

const HEADERS = { Authorization: `Bearer ${BENCH_TOKEN}`, 'A2A-Version': '1.0' };
const STREAM_HEADERS = { ...HEADERS, Accept: 'text/event-stream' };

export class BenchError extends Error {}

interface RpcEnvelope {
  jsonrpc?: string;
  result?: Record<string, unknown>;
  error?: unknown;
}

export function rpcBody(method: string, params: unknown, id: number | string = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

/** The headers of a request that authenticates with `token` (default: the bench's server token). */
const headersFor = (token: string | undefined): Record<string, string> =>
  token === undefined ? HEADERS : { ...HEADERS, Authorization: `Bearer ${token}` };

export function sendMessageRequest(
  port: number,
  text = SEND_TEXT,
  extra: Record<string, unknown> = {},
  token?: string,
): Buffer {
  const params = { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, ...extra };
  return postBytes(port, '/a2a', headersFor(token), rpcBody('SendMessage', params));
}

export function getTaskRequest(port: number, id: string, token?: string): Buffer {
  return postBytes(port, '/a2a', headersFor(token), rpcBody('GetTask', { id }));
}

export function listTasksRequest(port: number, params: Record<string, unknown>): Buffer {
  return postBytes(port, '/a2a', HEADERS, rpcBody('ListTasks', params));
}

export function streamRequest(port: number, text: string): Buffer {
  const params = { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } };
  return postBytes(port, '/a2a', STREAM_HEADERS, rpcBody('SendStreamingMessage', params));
}

export function subscribeRequest(port: number, id: string): Buffer {
  return postBytes(port, '/a2a', STREAM_HEADERS, rpcBody('SubscribeToTask', { id }));
}

/** The JSON-RPC result of a 200 response, or a BenchError saying what was wrong. */
export function resultOf(res: RawResponse, what: string): Record<string, unknown> {
  if (res.status !== 200)
    throw new BenchError(`${what}: HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
  const env = JSON.parse(res.body.toString('utf8')) as RpcEnvelope;
  if (env.jsonrpc !== '2.0' || env.result === undefined || typeof env.result !== 'object') {
    throw new BenchError(`${what}: not a JSON-RPC result: ${res.body.toString('utf8').slice(0, 300)}`);
  }
  return env.result;
}

type TaskJson = {
  id?: unknown;
  status?: { state?: unknown };
  artifacts?: Array<{ parts?: Array<{ text?: unknown }> }>;
};

const artifactText = (t: TaskJson): string =>
  (t.artifacts ?? [])
    .flatMap((a) => a.parts ?? [])
    .map((p) => (typeof p.text === 'string' ? p.text : ''))
    .join('');

/** A completed echo task whose answer restates `text`; returns its id. */
export function checkEchoTask(task: TaskJson, text: string, what: string): string {
  if (typeof task.id !== 'string' || task.id.length === 0) throw new BenchError(`${what}: task without id`);
  if (task.status?.state !== 'TASK_STATE_COMPLETED')
    throw new BenchError(`${what}: task ${task.id} is ${String(task.status?.state)}, not completed`);
  const got = artifactText(task);
  // The echo's first answer in a session adds how to connect a model (echo.actor.ts): still a restatement.
  if (got !== `You said: ${text}` && !got.startsWith(`You said: ${text}\n\n(builtin/echo only repeats`))
    throw new BenchError(`${what}: answer ${JSON.stringify(got.slice(0, 80))} does not restate the message`);
  return task.id;
}

export function checkSendResult(res: RawResponse, text = SEND_TEXT): string {
  const result = resultOf(res, 'SendMessage');
  return checkEchoTask(result['task'] ?? {}, text, 'SendMessage');
}

export function checkGetResult(res: RawResponse, id: string, text = SEND_TEXT): void {
  const task = resultOf(res, 'GetTask') as TaskJson;
  if (task.id !== id) throw new BenchError(`GetTask: asked for ${id}, got ${String(task.id)}`);
  checkEchoTask(task, text, 'GetTask');
}

export interface StreamOutcome {
  events: number;
  artifactEvents: number;
  firstEventMs: number;
  totalMs: number;
}

/**
 * Runs one SendStreamingMessage asking for `n` artifact events on an open connection and checks
 * the stream: a task first, n artifact updates, a completed status last, every event a result.
 */
export async function runStream(conn: RawConnection, req: Buffer, n: number): Promise<StreamOutcome> {
  let events = 0;
  let artifacts = 0;
  let first = Number.NaN;
  let last: Record<string, unknown> | undefined;
  let firstPayload: Record<string, unknown> | undefined;
  const t0 = performance.now();
  let failure: unknown;
  const parser = new SseParser((data) => {
    if (failure !== undefined) return;
    try {
      onEvent(data);
    } catch (err) {
      failure = err;
    }
  });
  const onEvent = (data: string): void => {
    if (events === 0) first = performance.now() - t0;
    events++;
    const env = JSON.parse(data) as RpcEnvelope;
    if (!env.result) throw new BenchError(`stream: event is not a result: ${data.slice(0, 300)}`);
    if (events === 1) firstPayload = env.result;
    if ('artifactUpdate' in env.result) artifacts++;
    last = env.result;
  };
  const res = await conn.request(req, { onData: (piece) => parser.push(piece) });
  const totalMs = performance.now() - t0;
  if (failure !== undefined) throw failure as unknown;
  if (res.status !== 200) throw new BenchError(`stream: HTTP ${res.status}`);
  if (!firstPayload || !('task' in firstPayload)) throw new BenchError('stream: the first event is not the task');
  if (artifacts !== n) throw new BenchError(`stream: expected ${n} artifact events, got ${artifacts}`);
  const st = (last?.['statusUpdate'] as { status?: { state?: string } } | undefined)?.status?.state;
  if (st !== 'TASK_STATE_COMPLETED')
    throw new BenchError(`stream: the last event is not a completed status (${JSON.stringify(last).slice(0, 200)})`);
  return { events, artifactEvents: artifacts, firstEventMs: first, totalMs };
}

/**
 * The fuzzer's runs over HTTP and stdio: batches of seeded cases, each answer checked, and after
 * every batch the server must still be alive (health + a real SendMessage/GetTask round trip);
 * after a batch of cases that must all be refused, nothing stored may have changed.
 */
import { dirname, resolve } from 'node:path';
import { BIN, TOKEN } from '../support/harness.ts';
import { refusedCase, Rng, wildCase, type FuzzCase } from './generators.ts';
import type { RawStdioAgent } from '../support/raw-agent.ts';
import { rawHttp } from './raw-http.ts';

export interface FuzzOptions {
  seed: number;
  count: number;
  batchSize?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** The server's body limit (the generators go past it). */
  maxBody?: number;
  log?: (line: string) => void;
}

export interface FuzzStats {
  cases: number;
  batches: number;
  refused: number;
  answered: Record<string, number>;
}

export class FuzzFailure extends Error {}

/** The server's own source tree: no answer may name a file in it. */
const SERVER_ROOT = resolve(dirname(BIN), '../../..');
const LEAKS: ReadonlyArray<[string, RegExp]> = [
  ['a stack frame', /\bat [\w$.<>[\] ]+ \((?:file|node|\/)/],
  ['a stack frame', /\bat (?:file|node):/],
  ['a Node internal', /node:internal/],
  ['SQLite', /SQLITE_|SqliteError|better-sqlite/],
  ['SQL', /\bSELECT\b|\bINSERT INTO\b|\bUPDATE tasks\b|\bFROM tasks\b/],
  ['an internal error class', /\b(?:RangeError|TypeError|ReferenceError|SyntaxError|ZodError)\b/],
  ['a server file path', new RegExp(SERVER_ROOT.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))],
  ['a compiled file path', /\/dist\/src\//],
];

function noLeak(text: string, c: FuzzCase): void {
  for (const [what, re] of LEAKS) {
    if (re.test(text)) throw new FuzzFailure(`${c.label}: the answer leaks ${what}: ${text.slice(0, 600)}`);
  }
}

/** A JSON-RPC 2.0 response: jsonrpc, an id, exactly one of result and error, a well-formed error. */
function checkRpc(msg: any, c: FuzzCase, refused: boolean): void {
  const bad = (why: string): never => {
    throw new FuzzFailure(`${c.label}: ${why}: ${JSON.stringify(msg).slice(0, 600)}`);
  };
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) bad('not a JSON-RPC object');
  if (msg.jsonrpc !== '2.0') bad('jsonrpc is not "2.0"');
  if (!('id' in msg)) bad('no id');
  if ('result' in msg === 'error' in msg) bad('needs exactly one of result and error');
  if ('error' in msg) {
    if (!Number.isInteger(msg.error?.code) || typeof msg.error?.message !== 'string') bad('a malformed error object');
    const reason = Array.isArray(msg.error.data) ? msg.error.data[0]?.reason : msg.error.data?.reason;
    // An internal error on client input is a defect the server did not contain.
    if (reason === 'INTERNAL') bad('an internal error');
  }
  if (c.expectId !== undefined && msg.id !== null && msg.id !== c.expectId)
    bad(`answered with id ${JSON.stringify(msg.id)} instead of ${c.expectId}`);
  if (refused && 'result' in msg) bad('accepted a request that must be refused');
}

const HTTP_STATUSES = new Set([200, 204, 400, 401, 404, 405, 408, 413, 415, 431]);

function checkHttpAnswer(status: number, contentType: string, text: string, c: FuzzCase, refused: boolean): void {
  noLeak(text, c);
  if (!HTTP_STATUSES.has(status))
    throw new FuzzFailure(`${c.label}: unexpected HTTP status ${status}: ${text.slice(0, 300)}`);
  if (status === 204) {
    if (refused && c.expectId !== undefined) throw new FuzzFailure(`${c.label}: a refused request answered 204`);
    return;
  }
  if (contentType.startsWith('text/event-stream')) {
    if (status !== 200) throw new FuzzFailure(`${c.label}: an event stream with status ${status}`);
    const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1] ?? '');
    for (const e of events) {
      let msg: unknown;
      try {
        msg = JSON.parse(e);
      } catch {
        throw new FuzzFailure(`${c.label}: an SSE event that is not JSON: ${e.slice(0, 300)}`);
      }
      checkRpc(msg, c, refused);
    }
    return;
  }
  if (!contentType.startsWith('application/json'))
    throw new FuzzFailure(`${c.label}: status ${status} with content type ${contentType || 'none'}`);
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new FuzzFailure(`${c.label}: status ${status} with a body that is not JSON: ${text.slice(0, 300)}`);
  }
  if (status === 200) checkRpc(body, c, refused);
  else if (typeof body !== 'object' || body === null)
    throw new FuzzFailure(`${c.label}: HTTP ${status} without a JSON object body`);
  if (refused && status === 200 && !('error' in body))
    throw new FuzzFailure(`${c.label}: accepted a request that must be refused`);
}

// ---- HTTP ----------------------------------------------------------------------------------

const DEFAULT_HEADERS: Record<string, string> = {
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
  'a2a-version': '1.0',
};

async function httpCase(base: string, port: number, c: FuzzCase, refused: boolean): Promise<string> {
  if (c.raw) {
    const ex = await rawHttp(port, { chunks: c.raw, abort: c.abort === true, timeoutMs: 3000 });
    for (const r of ex.responses) checkHttpAnswer(r.status, r.headers['content-type'] ?? '', r.body, c, refused);
    noLeak(ex.rest, c);
    return ex.responses.length > 0 ? `raw ${ex.responses[0]?.status}` : 'raw none';
  }
  const headers: Record<string, string> = { ...DEFAULT_HEADERS };
  for (const [k, v] of Object.entries(c.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 10_000);
  try {
    const res = await fetch(`${base}/a2a`, { method: 'POST', headers, body: c.body, signal: abort.signal });
    const type = res.headers.get('content-type') ?? '';
    if (c.abortStream && type.startsWith('text/event-stream')) {
      // An aborted stream: read one chunk, then go away.
      const reader = res.body?.getReader();
      const first = await reader?.read();
      abort.abort();
      noLeak(Buffer.from(first?.value ?? new Uint8Array()).toString('utf8'), c);
      return 'stream aborted';
    }
    const text = await res.text();
    checkHttpAnswer(res.status, type, text, c, refused);
    return String(res.status);
  } finally {
    clearTimeout(timer);
  }
}

async function httpJson(base: string, body: unknown): Promise<any> {
  const res = await fetch(`${base}/a2a`, { method: 'POST', headers: DEFAULT_HEADERS, body: JSON.stringify(body) });
  return res.json();
}

async function alive(
  call: (method: string, params: unknown) => Promise<any>,
  health: () => Promise<boolean>,
  where: string,
): Promise<void> {
  if (!(await health())) throw new FuzzFailure(`${where}: the server is not healthy`);
  const sent = await call('SendMessage', {
    message: { messageId: `alive-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'still alive?' }] },
  });
  const task = sent.result?.task;
  if (task?.status?.state !== 'TASK_STATE_COMPLETED')
    throw new FuzzFailure(`${where}: the round trip failed: ${JSON.stringify(sent).slice(0, 400)}`);
  const got = await call('GetTask', { id: task.id });
  if (got.result?.id !== task.id)
    throw new FuzzFailure(`${where}: GetTask after the round trip failed: ${JSON.stringify(got).slice(0, 400)}`);
}

interface Stored {
  tasks: number;
  sessions: number;
}

async function stored(call: (method: string, params: unknown) => Promise<any>): Promise<Stored> {
  const tasks = await call('ListTasks', { pageSize: 1 });
  const sessions = await call('_cleveragents/session/list', { pageSize: 1 });
  return { tasks: tasks.result.totalSize, sessions: sessions.result.totalSize };
}

async function pool<T>(items: readonly T[], width: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

/** Runs `count` cases against an HTTP server; throws a FuzzFailure naming the seed and the case. */
export async function fuzzHttp(server: { baseUrl: string; port: number }, opts: FuzzOptions): Promise<FuzzStats> {
  const r = new Rng(opts.seed);
  const batchSize = opts.batchSize ?? 100;
  const stats: FuzzStats = { cases: 0, batches: 0, refused: 0, answered: {} };
  const call = (method: string, params: unknown): Promise<any> =>
    httpJson(server.baseUrl, { jsonrpc: '2.0', id: 'probe', method, params });
  const health = async (): Promise<boolean> => (await fetch(`${server.baseUrl}/health`)).status === 200;
  for (let done = 0; done < opts.count; done += batchSize) {
    const refused = stats.batches % 2 === 0;
    const n = Math.min(batchSize, opts.count - done);
    const cases = Array.from({ length: n }, () =>
      refused
        ? refusedCase(r, { http: true, maxBody: opts.maxBody ?? 1024 * 1024, token: TOKEN })
        : wildCase(r, { http: true }),
    );
    const before = refused ? await stored(call) : undefined;
    await pool(cases, opts.concurrency ?? 4, async (c, i) => {
      try {
        const outcome = await httpCase(server.baseUrl, server.port, c, refused);
        stats.answered[outcome] = (stats.answered[outcome] ?? 0) + 1;
      } catch (err) {
        const why = err instanceof FuzzFailure ? err.message : `${c.label}: ${(err as Error).message}`;
        throw new FuzzFailure(
          `seed ${opts.seed}, case ${done + i}: ${why}\n  request: ${c.body.slice(0, 400)}${c.raw ? `\n  raw: ${JSON.stringify(c.raw).slice(0, 400)}` : ''}`,
        );
      }
    });
    stats.cases += n;
    stats.batches++;
    if (before) {
      stats.refused += n;
      const after = await stored(call);
      if (after.tasks !== before.tasks || after.sessions !== before.sessions) {
        throw new FuzzFailure(
          `seed ${opts.seed}, batch ${stats.batches}: refused requests changed what is stored: ${JSON.stringify(before)} → ${JSON.stringify(after)}`,
        );
      }
    }
    await alive(call, health, `seed ${opts.seed}, after batch ${stats.batches} (cases ${done}–${done + n - 1})`);
    opts.log?.(`http: ${stats.cases}/${opts.count} cases, ${stats.batches} batches`);
  }
  return stats;
}

// ---- stdio ---------------------------------------------------------------------------------

/** Runs `count` cases against an initialized stdio agent; throws a FuzzFailure naming the seed and the case. */
export async function fuzzStdio(agent: RawStdioAgent, opts: FuzzOptions): Promise<FuzzStats> {
  const r = new Rng(opts.seed);
  const batchSize = opts.batchSize ?? 100;
  const stats: FuzzStats = { cases: 0, batches: 0, refused: 0, answered: {} };
  let probes = 0;
  const call = (method: string, params: unknown): Promise<any> => agent.call(`probe-${++probes}`, method, params);
  for (let done = 0; done < opts.count; done += batchSize) {
    const refused = stats.batches % 2 === 0;
    const n = Math.min(batchSize, opts.count - done);
    const cases = Array.from({ length: n }, () =>
      refused
        ? refusedCase(r, { http: false, maxBody: opts.maxBody ?? 1024 * 1024, token: TOKEN })
        : wildCase(r, { http: false }),
    );
    const before = refused ? await stored(call) : undefined;
    const from = agent.lines.length;
    for (const c of cases) {
      agent.send(c.body);
      // Some streams are cancelled as soon as they are asked for.
      if (!refused && c.expectId && /Stream|stream|Subscribe|subscribe/.test(c.label) && r.bool(0.3)) {
        agent.send(JSON.stringify({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: c.expectId } }));
      }
    }
    const where = `seed ${opts.seed}, batch ${stats.batches + 1} (cases ${done}–${done + n - 1})`;
    for (const c of cases) {
      if (c.expectId === undefined) continue;
      let answer: any;
      try {
        answer = await agent.waitFor((m) => m.id === c.expectId && ('result' in m || 'error' in m), 15_000);
      } catch (err) {
        throw new FuzzFailure(
          `${where}: ${c.label}: no answer: ${(err as Error).message}\n  request: ${c.body.slice(0, 400)}`,
        );
      }
      try {
        checkRpc(answer, c, refused);
      } catch (err) {
        throw new FuzzFailure(`${where}: ${(err as Error).message}\n  request: ${c.body.slice(0, 400)}`);
      }
      const outcome = 'error' in answer ? String(answer.error.code) : 'ok';
      stats.answered[outcome] = (stats.answered[outcome] ?? 0) + 1;
    }
    if (before) {
      const after = await stored(call);
      if (after.tasks !== before.tasks || after.sessions !== before.sessions) {
        throw new FuzzFailure(
          `${where}: refused requests changed what is stored: ${JSON.stringify(before)} → ${JSON.stringify(after)}`,
        );
      }
    }
    await alive(call, async () => agent.alive, where);
    // Everything written during the batch: JSON-RPC responses or stream events, nothing leaked.
    for (const line of agent.lines.slice(from)) {
      const c: FuzzCase = { label: `${where}: a line the agent wrote`, body: '' };
      if (line.unparsable !== undefined)
        throw new FuzzFailure(`${c.label} is not JSON: ${String(line.unparsable).slice(0, 300)}`);
      noLeak(JSON.stringify(line), c);
      if (line.method === '_cleveragents/stream/event') continue;
      checkRpc(line, c, false);
    }
    stats.cases += n;
    stats.batches++;
    if (before) stats.refused += n;
    // The agent keeps what it wrote; a long run would otherwise hold every line in memory.
    agent.lines.splice(0, agent.lines.length);
    opts.log?.(`stdio: ${stats.cases}/${opts.count} cases, ${stats.batches} batches`);
  }
  return stats;
}

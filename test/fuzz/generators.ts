/**
 * Seeded generators of hostile input for the fuzzer. Everything comes from one PRNG, so a seed
 * replays a run exactly. Two families:
 * - `refused` cases: a valid write request with one mutation that must make the server refuse it
 *   before anything is stored (the fuzzer checks that nothing stored changed);
 * - `wild` cases: anything (random methods, values, unicode, prototype keys, numeric edges,
 *   traversal strings, aborted streams), which may succeed or fail but must be answered well.
 * No generated text contains the words the leak check looks for (stack frames, SQL, class names).
 */

/** mulberry32: small, fast, good enough to spread cases; the same seed gives the same run. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  bool(p = 0.5): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ufeff',
  '\ufeffbom-first',
  '\ud800',
  'lone \udfff low',
  '\u202eright-to-left',
  '𝕏 emoji 👍🏽 zwj 👩‍👩‍👧',
  '../../etc/passwd',
  '..\\..\\windows\\system32',
  '%2e%2e%2f%2e%2e%2fetc',
  '/etc/shadow',
  'file:///etc/hosts',
  "x'; DROP TABLE tasks;--",
  '" OR 1=1 --',
  '__proto__',
  'constructor',
  'prototype',
  '{{7*7}}',
  '${process.env}',
  '<script>alert(1)</script>',
  'x'.repeat(300),
  '\r\n\r\nHTTP/1.1 200 OK',
  'tck-complete-task',
];

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
/** Numbers written as JSON text: some only exist as text (1e309 parses to Infinity). */
const NUMERIC_EDGES = [
  '1e309',
  '-1e309',
  '-0',
  '0',
  '1.5',
  '-1',
  '9007199254740993',
  '18446744073709551616',
  '1e-400',
  '123456789012345678901234567890',
];

/** A JSON value with `0xFFFF…` markers for raw numeric text (so 1e309 survives as written). */
export function jsonValue(r: Rng, depth = 0): unknown {
  const k = r.int(depth > 3 ? 4 : 8);
  switch (k) {
    case 0:
      return r.pick(HOSTILE_STRINGS);
    case 1:
      return rawNumber(r.pick(NUMERIC_EDGES));
    case 2:
      return r.pick([true, false, null]);
    case 3:
      return r.int(1000) - 500;
    case 4:
    case 5: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--)
        setKey(
          o,
          r.bool(0.3) ? r.pick(PROTO_KEYS) : r.pick(['a', 'text', 'id', 'data', 'kind', r.pick(HOSTILE_STRINGS)]),
          jsonValue(r, depth + 1),
        );
      return o;
    }
    case 6:
      return Array.from({ length: r.int(4) }, () => jsonValue(r, depth + 1));
    default:
      return nested(r.int(3) === 0 ? 70 + r.int(3000) : 1 + r.int(20));
  }
}

const RAW = '\u0001raw:';
const rawNumber = (text: string): string => `${RAW}${text}`;

/** JSON text of a value, with the raw numbers written as generated. */
export function toJson(v: unknown): string {
  return JSON.stringify(v).replace(RAW_IN_JSON, '$1');
}
const RAW_IN_JSON = /"\\u0001raw:([^"]*)"/g;

/** Sets a key as an own, enumerable property, even `__proto__` (so it is sent as written). */
function setKey(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/**
 * An array nested `n` deep, as raw JSON text in the request (a nested value that deep would
 * overflow the fuzzer's own JSON.stringify before the server ever saw it).
 */
export function nested(n: number): unknown {
  return `${RAW}${'['.repeat(n)}${']'.repeat(n)}`;
}

export interface FuzzCase {
  /** What the case is, for the failure report. */
  label: string;
  /** The JSON-RPC text (HTTP body or stdio line). */
  body: string;
  /** HTTP only: headers to send (undefined: the defaults). */
  headers?: Record<string, string | undefined>;
  /** The id the answer must carry, when the envelope stays valid. */
  expectId?: string;
  /** HTTP only: raw bytes instead of a fetch (net.Socket), for oddities fetch cannot send. */
  raw?: Array<string | Buffer | number>;
  /** Raw only: close abruptly after sending. */
  abort?: boolean;
  /** Fetch only: abort the stream after the first event. */
  abortStream?: boolean;
}

let counter = 0;
const freshId = (): string => `f${++counter}`;

function validSend(r: Rng, id: string, streaming = r.bool(0.3)): Record<string, any> {
  return {
    jsonrpc: '2.0',
    id,
    method: streaming ? 'SendStreamingMessage' : 'SendMessage',
    params: { message: { messageId: `mid-${id}`, role: 'ROLE_USER', parts: [{ text: `fuzz ${r.int(1e6)}` }] } },
  };
}

type Mutation = (
  r: Rng,
  req: Record<string, any>,
  ctx: { http: boolean; maxBody: number },
) => Partial<FuzzCase> & { text?: string; breaksId?: boolean };

/** Each of these must make the server refuse the request before it stores anything. */
const FATAL: ReadonlyArray<[string, Mutation]> = [
  [
    'truncated JSON',
    (r, req) => {
      const t = JSON.stringify(req);
      return { text: t.slice(0, 1 + r.int(t.length - 1)), breaksId: true };
    },
  ],
  [
    'not JSON',
    (r) => ({
      text: r.pick([
        '',
        'null',
        'nul',
        '{',
        '}',
        '[',
        '"\\ud800',
        "{'a':1}",
        '{"a":1,}',
        '\ufeff{}',
        'NaN',
        '1e309',
        '{"jsonrpc":"2.0"',
      ]),
      breaksId: true,
    }),
  ],
  [
    'jsonrpc wrong',
    (r, req) => {
      const v = r.pick(['1.0', '2', 2, null, '']);
      if (r.bool(0.2)) delete req['jsonrpc'];
      else req['jsonrpc'] = v;
      return {};
    },
  ],
  [
    'method wrong',
    (r, req) => {
      req['method'] = r.pick([
        42,
        '',
        null,
        ['SendMessage'],
        { m: 1 },
        'DropTables',
        'sendmessage',
        'SendMessage ',
        '_cleveragents/nope',
        '../SendMessage',
        '__proto__',
        'constructor',
      ]);
      return {};
    },
  ],
  [
    'id wrong',
    (r, req) => {
      req['id'] = r.pick([{ x: 1 }, [1], true, nested(5)]);
      return { breaksId: true };
    },
  ],
  [
    'params wrong type',
    (r, req) => {
      req['params'] = r.pick(['str', 5, true, [req['params']]]);
      return {};
    },
  ],
  [
    'role wrong',
    (r, req) => {
      req['params'].message.role = r.pick(['ROLE_AGENT', 'user', 'agent', 5, null, '', 'ROLE_UNSPECIFIED']);
      return {};
    },
  ],
  [
    'parts wrong',
    (r, req) => {
      req['params'].message.parts = r.pick([
        [],
        'text',
        null,
        [{}],
        [{ text: 'a', data: 1 }],
        [{ text: 5 }],
        [{ raw: '!!notbase64!!' }],
        [{ url: 'not a url' }],
        [null],
      ]);
      return {};
    },
  ],
  [
    'messageId wrong',
    (r, req) => {
      req['params'].message.messageId = r.pick(['', 5, null, ['x']]);
      return {};
    },
  ],
  [
    'message missing',
    (_r, req) => {
      delete req['params'].message;
      return {};
    },
  ],
  [
    'deep nesting',
    (r, req) => {
      const deep = nested(65 + r.int(r.bool(0.2) ? 20_000 : 500));
      const at = r.int(5);
      const m = req['params'].message;
      if (at === 0) m.parts[0] = { data: deep };
      else if (at === 1) m.metadata = { x: deep };
      else if (at === 2) req['params'].metadata = { deep };
      else if (at === 3) m.parts.push({ data: { a: { b: deep } } });
      else req['params'].configuration = { acceptedOutputModes: deep };
      return {};
    },
  ],
  [
    'too many parts',
    (r, req) => {
      req['params'].message.parts = Array.from({ length: 101 + r.int(50) }, (_, i) => ({ text: `p${i}` }));
      return {};
    },
  ],
  [
    'too many metadata keys',
    (r, req) => {
      const meta = Object.fromEntries(Array.from({ length: 65 + r.int(50) }, (_, i) => [`k${i}`, i]));
      const where = r.int(3);
      if (where === 0) req['params'].message.metadata = meta;
      else if (where === 1) req['params'].metadata = meta;
      else req['params'].message.parts[0].metadata = meta;
      return {};
    },
  ],
  [
    'historyLength wrong',
    (r, req) => {
      req['params'].configuration = { historyLength: rawNumber(r.pick(['1e309', '-1', '1.5', '-1e309'])) };
      return {};
    },
  ],
  [
    'contextId traversal',
    (r, req) => {
      req['params'].message.contextId = r.pick([
        '../../etc/passwd',
        'a b',
        "x'; DROP TABLE tasks;--",
        'x'.repeat(500),
        '\u0000',
        '/abs/path',
      ]);
      return {};
    },
  ],
  [
    'taskId unknown or hostile',
    (r, req) => {
      req['params'].message.taskId = r.pick([
        '../../etc/passwd',
        'missing-task',
        '\ud800',
        '01ARZ3NDEKTSV4RRFFQ69G5FAV',
        'x'.repeat(500),
      ]);
      return {};
    },
  ],
  [
    'version unsupported',
    (r) => ({ headers: { 'a2a-version': r.pick(['9.9', 'abc', '0.2', '1.0.0.0', '2.0', 'x1']) } }),
  ],
  [
    'no or bad token',
    (r) => ({
      headers: {
        authorization: r.pick([
          undefined,
          'Bearer',
          'Bearer wrong-token-0123456789',
          'Basic dXNlcjpwYXNz',
          'bearer',
          'Bearer  x',
          'Token abc',
        ]),
      },
    }),
  ],
  [
    'content type wrong',
    (r) => ({
      headers: {
        'content-type': r.pick([
          undefined,
          'text/plain',
          'application/jsonx',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
          '',
        ]),
      },
    }),
  ],
  [
    'body too large',
    (_r, req, ctx) => {
      req['params'].message.parts[0].text = 'x'.repeat(ctx.maxBody + 10);
      return {};
    },
  ],
  [
    'part too large',
    (_r, req) => {
      req['params'].message.parts[0].text = 'y'.repeat(1024 * 1024 + 1);
      return {};
    },
  ],
];

/** HTTP-only refusals, on a raw socket: nothing here may store anything either. */
function rawFatal(r: Rng, token: string, body: string): FuzzCase {
  const head = (extra: string, len = Buffer.byteLength(body)): string =>
    `POST /a2a HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\na2a-version: 1.0\r\nconnection: close\r\n${extra}content-length: ${len}\r\n\r\n`;
  const k = r.int(12);
  switch (k) {
    case 0:
      return {
        label: 'raw: bad request line',
        body,
        raw: [
          r.pick([
            'GARBAGE\r\n\r\n',
            'POST\r\n\r\n',
            'POST /a2a HTTP/9.9\r\n\r\n',
            'POST /a2a\u0000 HTTP/1.1\r\n\r\n',
            '\r\n\r\n\r\n',
            'GET / HTTP/1.1\r\nbad header\r\n\r\n',
          ]),
        ],
      };
    case 1:
      return {
        label: 'raw: broken chunked encoding',
        body,
        raw: [
          `POST /a2a HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
          r.pick(['zz\r\nabc\r\n0\r\n\r\n', '5\r\nabc\r\n0\r\n\r\n', '3\r\n{"a\r\n', 'ffffffffffffffffff\r\n']),
        ],
      };
    case 2:
      return {
        label: 'raw: body shorter than Content-Length, then half-closed',
        body,
        raw: [head('', Buffer.byteLength(body) + 1 + r.int(100)), body.slice(0, r.int(body.length))],
      };
    case 3:
      return { label: 'raw: early close in the headers', body, raw: [head('').slice(0, 1 + r.int(60))], abort: true };
    case 4:
      return {
        label: 'raw: early close in the body',
        body,
        raw: [head(''), body.slice(0, r.int(body.length))],
        abort: true,
      };
    case 5: {
      // A slow client: the request in a few pieces with pauses (bounded: well under a second).
      const text = head('') + body.slice(0, body.length - 1);
      const cut = 1 + r.int(text.length - 2);
      return { label: 'raw: slow, truncated body', body, raw: [text.slice(0, cut), 20 + r.int(60), text.slice(cut)] };
    }
    case 6:
      return {
        label: 'raw: both Content-Length and chunked',
        body,
        raw: [head('transfer-encoding: chunked\r\n'), body],
      };
    case 7:
      return {
        label: 'raw: duplicate Content-Length',
        body,
        raw: [head(`content-length: ${Buffer.byteLength(body) + 5}\r\n`), body],
      };
    case 8:
      return {
        label: 'raw: huge header',
        body,
        raw: [`POST /a2a HTTP/1.1\r\nhost: x\r\nx-big: ${'h'.repeat(20_000 + r.int(60_000))}\r\n\r\n`],
      };
    case 9:
      return { label: 'raw: announced too large', body, raw: [head('', 5_000_000 + r.int(1e8)), body] };
    case 10:
      return {
        label: 'raw: no token, HTTP/1.0',
        body,
        raw: [
          `POST /a2a HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        ],
      };
    default:
      return {
        label: 'raw: wrong method on the endpoint',
        body,
        raw: [
          `${r.pick(['PUT', 'DELETE', 'PATCH', 'GET', 'OPTIONS', 'TRACE'])} /a2a HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
        ],
      };
  }
}

/** A case that must be refused before anything is stored. */
export function refusedCase(r: Rng, ctx: { http: boolean; maxBody: number; token: string }): FuzzCase {
  const id = freshId();
  const req = validSend(r, id);
  if (ctx.http && r.int(6) === 0) return rawFatal(r, ctx.token, JSON.stringify(req));
  const options = FATAL.filter(
    ([name]) =>
      ctx.http || !['version unsupported', 'no or bad token', 'content type wrong', 'body too large'].includes(name),
  );
  const [label, mutate] = r.pick(options);
  const out = mutate(r, req, ctx);
  const body = out.text ?? toJson(req);
  const c: FuzzCase = { label: `refused: ${label}`, body };
  if (out.headers) c.headers = out.headers;
  if (!out.breaksId && out.text === undefined) c.expectId = id;
  return c;
}

const WILD_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'message/send',
  'message/stream',
  'GetTask',
  'tasks/get',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'tasks/resubscribe',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
  'rpc.discover',
  '_cleveragents/health/check',
  '_cleveragents/session/list',
  '_cleveragents/session/show',
  '_cleveragents/session/delete',
  '_cleveragents/plan/status',
  '_cleveragents/plan/list',
  '_cleveragents/plan/tree',
  '_cleveragents/registry/actors/show',
  '_cleveragents/registry/tools/list',
  '_cleveragents/registry/resources/show',
  '_cleveragents/namespace/show',
  '_cleveragents/namespace/members',
  'NoSuchMethod',
];

function protoObject(r: Rng): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  setKey(o, r.pick(PROTO_KEYS), r.bool() ? { polluted: true } : jsonValue(r));
  return o;
}

/** Params shaped like the method's, with hostile values in random fields. */
function wildParams(r: Rng, method: string): unknown {
  const s = (): unknown => (r.bool(0.7) ? r.pick(HOSTILE_STRINGS) : jsonValue(r));
  if (/Send|message\//.test(method)) {
    const part = r.pick([
      { text: s() },
      { data: jsonValue(r) },
      { url: s() },
      { raw: s() },
      { text: 'ok', metadata: protoObject(r) },
    ]);
    const message: Record<string, unknown> = {
      messageId: r.bool(0.9) ? `w-${r.int(1e9)}` : s(),
      role: r.bool(0.9) ? 'ROLE_USER' : s(),
      parts: [part],
    };
    if (r.bool(0.2)) setKey(message, r.pick(PROTO_KEYS), { polluted: true });
    if (r.bool(0.1)) message['contextId'] = s();
    if (r.bool(0.1)) message['kind'] = 'message';
    const p: Record<string, unknown> = { message };
    if (r.bool(0.2))
      p['configuration'] = {
        historyLength: r.bool() ? rawNumber(r.pick(NUMERIC_EDGES)) : s(),
        returnImmediately: r.bool(),
      };
    if (r.bool(0.1)) p['metadata'] = protoObject(r);
    return p;
  }
  if (/session\/(show|delete)/.test(method)) return { sessionId: s() };
  if (/plan\/(status|tree)/.test(method)) return { planId: s() };
  if (/registry|namespace/.test(method)) return r.bool() ? { name: s() } : jsonValue(r);
  if (/Push|pushNotification/.test(method)) return { taskId: s(), id: s(), task_id: s(), url: s() };
  if (/Task|tasks\//.test(method))
    return r.bool(0.8) ? { id: s(), historyLength: rawNumber(r.pick(NUMERIC_EDGES)) } : jsonValue(r);
  return r.bool() ? {} : jsonValue(r);
}

/** Anything at all: it may succeed; it must be answered well. */
export function wildCase(r: Rng, ctx: { http: boolean }): FuzzCase {
  const id = freshId();
  const method = r.pick(WILD_METHODS);
  const req: Record<string, unknown> = { jsonrpc: '2.0', id, method, params: wildParams(r, method) };
  if (r.bool(0.05)) delete req['id'];
  const c: FuzzCase = { label: `wild: ${method}`, body: toJson(req) };
  if (req['id'] !== undefined) c.expectId = id;
  if (ctx.http) {
    if (r.bool(0.15))
      c.headers = {
        'a2a-version': r.pick(['0.3', '1.0', undefined, ' 1.0 ', '1']),
        'content-type': r.pick([
          'application/json',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'application/a2a+json',
        ]),
        accept: r.pick([undefined, 'text/event-stream', '*/*']),
      };
    if (/Stream|stream|Subscribe|subscribe/.test(method) && r.bool(0.4)) c.abortStream = true;
  }
  return c;
}

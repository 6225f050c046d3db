/**
 * Fake LLM endpoints over real HTTP (127.0.0.1, ephemeral port): an OpenAI-compatible
 * `/v1/chat/completions` server and an Anthropic `/v1/messages` server, streaming SSE exactly as
 * the real APIs do. Each test scripts the replies (a FIFO, then an optional responder) and reads
 * what the client sent (every request is recorded, with whether the client went away early).
 *
 * "Content chunks" (what `stallAfter`, `holdAfter`, `errorAfter`, `cutAfter` and `endAfter` count) are the
 * text deltas and tool-argument deltas; the framing events before them (OpenAI's role chunk,
 * Anthropic's message_start / content_block_start / ping) are always sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeToolCall {
  id?: string;
  name: string;
  /** The raw JSON text of the arguments (may be malformed on purpose). */
  arguments: string;
  /** Into how many deltas the arguments are split (default 3). */
  chunks?: number;
}

/**
 * The tokens a reply reports. `input` is every input token (what the client reports as
 * inputTokens): OpenAI's `prompt_tokens`; Anthropic's `input_tokens` is what is left of it after
 * the cache reads and writes, which Anthropic reports apart.
 */
export interface FakeUsage {
  input: number;
  output: number;
  /** Of `input`, read from the prompt cache: Anthropic `cache_read_input_tokens`, OpenAI `prompt_tokens_details.cached_tokens` (sent only when given, as an endpoint that reports it). */
  cacheRead?: number;
  /** Of `input`, written to the prompt cache: Anthropic `cache_creation_input_tokens` (OpenAI reports none). */
  cacheWrite?: number;
}

export interface FakeStreamReply {
  text?: string[];
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  /** The provider's raw finish reason (default: stop/end_turn, or tool_calls/tool_use with tool calls). */
  finish?: string;
  /** Wait between chunks (ms). */
  delayMs?: number;
  /** Send this many content chunks, then nothing (the connection stays open). */
  stallAfter?: number;
  /** After `holdAfter` content chunks (default 1), wait for `gate` before sending the rest. */
  gate?: Promise<void>;
  holdAfter?: number;
  /** After `errorAfter` content chunks (default 0), send the provider's mid-stream error and end. */
  streamError?: { type: string; message: string };
  errorAfter?: number;
  /** After this many content chunks, destroy the connection (a cut). */
  cutAfter?: number;
  /**
   * After this many content chunks, end the answer cleanly without its closing frames (no finish,
   * no message_stop, no [DONE]): what a server or proxy that gives up mid-answer sends.
   */
  endAfter?: number;
}

export interface FakeErrorReply {
  error: {
    status: number;
    /** OpenAI `error.code` (e.g. invalid_api_key); Anthropic uses `type`. */
    code?: string;
    /** OpenAI `error.type` / Anthropic `error.type` (e.g. rate_limit_error). */
    type?: string;
    message: string;
    headers?: Record<string, string>;
  };
}

/** Headers, then nothing, until the client goes away or the fake closes. */
export interface FakeHangReply {
  hang: true;
}

export type FakeReply = FakeStreamReply | FakeErrorReply | FakeHangReply;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (undefined when none or unreadable). */
  body: unknown;
  /** When the request arrived (Date.now()). */
  receivedAt: number;
  /** The client disconnected before the fake finished its answer. */
  aborted: boolean;
  /** Resolves when the connection of this request is closed (either side). */
  closed: Promise<void>;
}

export interface FakeLlmOptions {
  /** Requests without this key (Bearer / x-api-key) get the provider's 401. */
  expectKey?: string;
  /** The ids GET /v1/models lists (default ['fake-model']). */
  models?: string[];
}

export interface FakeLlm {
  /** The base URL an actor uses: http://127.0.0.1:<port>/v1 */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests to the generation endpoint only (not /models). */
  readonly generations: RecordedRequest[];
  /** Append replies to the FIFO. */
  push(...replies: FakeReply[]): void;
  /** Decide the reply from the request when the FIFO is empty (instead of the 500). */
  reply(fn: (req: RecordedRequest) => FakeReply): void;
  close(): Promise<void>;
}

/** A promise a test releases: hold a stream after its first chunk(s). */
export function createGate(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

interface Dialect {
  generationPath: string;
  keyOf(req: http.IncomingMessage): string | undefined;
  errorBody(e: FakeErrorReply['error']): unknown;
  authError: FakeErrorReply['error'];
  modelsBody(ids: string[]): unknown;
  /** The SSE frames of a reply, each marked as a content chunk or framing. */
  frames(reply: FakeStreamReply, body: Record<string, unknown>): Frame[];
  streamErrorFrame(e: { type: string; message: string }): string;
  doneFrame?: string;
}

interface Frame {
  text: string;
  /** A text or tool-argument delta. */
  content: boolean;
  /** The first of the frames that close the answer (finish, usage, stop). */
  closing?: boolean;
}

const sse = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;
const sseEvent = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function split(s: string, n: number): string[] {
  if (n <= 1 || s.length <= 1) return [s];
  const size = Math.ceil(s.length / n);
  const parts: string[] = [];
  for (let i = 0; i < s.length; i += size) parts.push(s.slice(i, i + size));
  return parts;
}

const openAiDialect: Dialect = {
  generationPath: '/v1/chat/completions',
  keyOf: (req) => /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1],
  errorBody: (e) => ({
    error: { message: e.message, type: e.type ?? 'invalid_request_error', param: null, code: e.code ?? null },
  }),
  authError: {
    status: 401,
    code: 'invalid_api_key',
    type: 'invalid_request_error',
    message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  modelsBody: (ids) => ({
    object: 'list',
    data: ids.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'fake' })),
  }),
  frames(reply, body) {
    const base = {
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: String(body.model),
    };
    const chunk = (delta: unknown, finish: string | null = null) =>
      sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const frames: Frame[] = [{ text: chunk({ role: 'assistant', content: '' }), content: false }];
    for (const t of reply.text ?? []) frames.push({ text: chunk({ content: t }), content: true });
    (reply.toolCalls ?? []).forEach((call, index) => {
      const parts = split(call.arguments, call.chunks ?? 3);
      const id = call.id ?? `call_${index}`;
      frames.push({
        text: chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }),
        content: false,
      });
      for (const p of parts)
        frames.push({ text: chunk({ tool_calls: [{ index, function: { arguments: p } }] }), content: true });
    });
    const finish = reply.finish ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
    frames.push({ text: chunk({}, finish), content: false, closing: true });
    const opts = body.stream_options as { include_usage?: boolean } | undefined;
    if (opts?.include_usage && reply.usage)
      frames.push({
        text: sse({
          ...base,
          choices: [],
          usage: {
            prompt_tokens: reply.usage.input,
            completion_tokens: reply.usage.output,
            total_tokens: reply.usage.input + reply.usage.output,
            ...(reply.usage.cacheRead !== undefined
              ? { prompt_tokens_details: { cached_tokens: reply.usage.cacheRead } }
              : {}),
          },
        }),
        content: false,
      });
    return frames;
  },
  streamErrorFrame: (e) => sse({ error: { message: e.message, type: e.type, param: null, code: null } }),
  doneFrame: 'data: [DONE]\n\n',
};

const anthropicDialect: Dialect = {
  generationPath: '/v1/messages',
  keyOf: (req) => (typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : undefined),
  errorBody: (e) => ({ type: 'error', error: { type: e.type ?? e.code ?? 'api_error', message: e.message } }),
  authError: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
  modelsBody: (ids) => ({
    data: ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids[ids.length - 1] ?? null,
  }),
  frames(reply, body) {
    const usage = reply.usage ?? { input: 0, output: 0 };
    const cacheRead = usage.cacheRead ?? 0;
    const cacheWrite = usage.cacheWrite ?? 0;
    const frames: Frame[] = [
      {
        text: sseEvent('message_start', {
          type: 'message_start',
          message: {
            id: 'msg_fake',
            type: 'message',
            role: 'assistant',
            content: [],
            model: String(body.model),
            stop_reason: null,
            stop_sequence: null,
            // The API always sends the cache fields (0 when nothing was cached); input_tokens excludes them.
            usage: {
              input_tokens: Math.max(0, usage.input - cacheRead - cacheWrite),
              cache_creation_input_tokens: cacheWrite,
              cache_read_input_tokens: cacheRead,
              output_tokens: 1,
            },
          },
        }),
        content: false,
      },
    ];
    let index = 0;
    if (reply.text?.length) {
      frames.push({
        text: sseEvent('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        }),
        content: false,
      });
      frames.push({ text: sseEvent('ping', { type: 'ping' }), content: false });
      for (const t of reply.text)
        frames.push({
          text: sseEvent('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: t },
          }),
          content: true,
        });
      frames.push({ text: sseEvent('content_block_stop', { type: 'content_block_stop', index }), content: false });
      index++;
    }
    for (const call of reply.toolCalls ?? []) {
      frames.push({
        text: sseEvent('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: call.id ?? `toolu_${index}`, name: call.name, input: {} },
        }),
        content: false,
      });
      for (const p of split(call.arguments, call.chunks ?? 3))
        frames.push({
          text: sseEvent('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: p },
          }),
          content: true,
        });
      frames.push({ text: sseEvent('content_block_stop', { type: 'content_block_stop', index }), content: false });
      index++;
    }
    const finish = reply.finish ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn');
    frames.push({
      text: sseEvent('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: finish, stop_sequence: null },
        usage: { output_tokens: usage.output },
      }),
      content: false,
      closing: true,
    });
    frames.push({ text: sseEvent('message_stop', { type: 'message_stop' }), content: false });
    return frames;
  },
  streamErrorFrame: (e) => sseEvent('error', { type: 'error', error: { type: e.type, message: e.message } }),
};

/**
 * Where a recorded Anthropic request put its prompt-cache breakpoints (`cache_control`), in the
 * order Anthropic reads the prompt: `tools[i]`, `system[i]`, `messages[i].content[j]`.
 */
export function cacheBreakpoints(body: unknown): string[] {
  const b = (body ?? {}) as { tools?: unknown[]; system?: unknown; messages?: Array<{ content?: unknown }> };
  const marked = (block: unknown): boolean =>
    block !== null && typeof block === 'object' && (block as { cache_control?: unknown }).cache_control != null;
  const found: string[] = [];
  (b.tools ?? []).forEach((t, i) => marked(t) && found.push(`tools[${i}]`));
  if (Array.isArray(b.system)) b.system.forEach((s, i) => marked(s) && found.push(`system[${i}]`));
  (b.messages ?? []).forEach((m, i) => {
    if (Array.isArray(m.content)) m.content.forEach((c, j) => marked(c) && found.push(`messages[${i}].content[${j}]`));
  });
  return found;
}

export function startFakeOpenAI(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  return startFake(openAiDialect, options);
}

export function startFakeAnthropic(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  return startFake(anthropicDialect, options);
}

async function startFake(dialect: Dialect, options: FakeLlmOptions): Promise<FakeLlm> {
  const queue: FakeReply[] = [];
  let responder: ((req: RecordedRequest) => FakeReply) | undefined;
  const requests: RecordedRequest[] = [];
  const open = new Set<http.ServerResponse>();
  const models = options.models ?? ['fake-model'];

  const sendError = (res: http.ServerResponse, e: FakeErrorReply['error']) => {
    res.writeHead(e.status, { 'content-type': 'application/json', ...(e.headers ?? {}) });
    res.end(JSON.stringify(dialect.errorBody(e)));
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest) => {
    const pathname = (req.url ?? '/').split('?')[0] ?? '/';
    if (options.expectKey !== undefined && dialect.keyOf(req) !== options.expectKey)
      return sendError(res, dialect.authError);
    // What an Ollama answers for its pulled models (agents init looks there).
    if (req.method === 'GET' && pathname === '/api/tags') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ models: models.map((name) => ({ name, model: name })) }));
    }
    if (req.method === 'GET' && pathname === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(dialect.modelsBody(models)));
    }
    if (req.method !== 'POST' || pathname !== dialect.generationPath)
      return sendError(res, {
        status: 404,
        type: 'not_found_error',
        message: `fake: no route ${req.method} ${pathname}`,
      });
    const body = rec.body as Record<string, unknown> | undefined;
    if (body === undefined || typeof body !== 'object')
      return sendError(res, { status: 400, type: 'invalid_request_error', message: 'fake: the body is not JSON' });
    if (body.stream !== true)
      return sendError(res, {
        status: 400,
        type: 'invalid_request_error',
        message: 'fake: only stream: true is served',
      });
    const reply = queue.shift() ?? responder?.(rec);
    if (reply === undefined)
      return sendError(res, { status: 500, type: 'server_error', message: 'fake: no scripted reply left' });
    if ('error' in reply) return sendError(res, reply.error);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    if ('hang' in reply) return;
    await writeStream(res, dialect, reply, body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const rec: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      receivedAt: Date.now(),
      body: undefined,
      aborted: false,
      closed: new Promise<void>((resolve) =>
        res.on('close', () => {
          if (!res.writableFinished) rec.aborted = true;
          open.delete(res);
          resolve();
        }),
      ),
    };
    requests.push(rec);
    open.add(res);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        rec.body = text === '' ? undefined : JSON.parse(text);
      } catch {
        rec.body = undefined;
      }
      handle(req, res, rec).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get generations() {
      return requests.filter((r) => r.path.startsWith(dialect.generationPath));
    },
    push: (...replies) => void queue.push(...replies),
    reply: (fn) => void (responder = fn),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The next 'drain' (or the end of the connection), leaving no listener behind. */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function writeStream(
  res: http.ServerResponse,
  dialect: Dialect,
  reply: FakeStreamReply,
  body: Record<string, unknown>,
): Promise<void> {
  const frames = dialect.frames(reply, body);
  // Where "after n content chunks" falls: before the frame that follows the n-th content chunk
  // (n = 0: before the first content chunk, or before the closing frames when there is none).
  const at = (n: number | undefined): number => {
    if (n === undefined) return -1;
    let seen = 0;
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i] as Frame;
      if (seen === n && (f.content || f.closing)) return i;
      if (f.content) seen++;
      if (seen === n && n > 0) return i + 1;
    }
    return frames.length;
  };
  const stall = at(reply.stallAfter);
  const cut = at(reply.cutAfter);
  const end = at(reply.endAfter);
  const error = reply.streamError ? at(reply.errorAfter ?? 0) : -1;
  const hold = reply.gate ? at(reply.holdAfter ?? 1) : -1;
  const gone = () => res.destroyed || res.writableEnded;
  for (let i = 0; i <= frames.length; i++) {
    if (i === stall) return; // stays open until the client or close() ends it
    if (i === cut) {
      // end the socket after what was written is flushed: the chunked body stops short
      res.socket?.end();
      return;
    }
    if (i === end) return void res.end();
    if (i === error && reply.streamError) return void res.end(dialect.streamErrorFrame(reply.streamError));
    if (i === hold && reply.gate) await reply.gate;
    const frame = frames[i];
    if (frame === undefined) break;
    if (frame.content && reply.delayMs) await sleep(reply.delayMs);
    if (gone()) return;
    if (!res.write(frame.text)) await drained(res);
  }
  if (!gone()) res.end(dialect.doneFrame ?? '');
}

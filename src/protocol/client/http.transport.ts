import { A2AClientError, A2ATransportError } from './client-error.ts';
import { readSse } from './sse.ts';
import type { ClientStreamEvent, ClientTransport, RequestOptions } from './transport.ts';
import type { JsonRpcResponse } from '../jsonrpc/envelope.ts';

export interface HttpTransportOptions {
  /** The server's base URL (http://127.0.0.1:8080) or its JSON-RPC endpoint (…/a2a). */
  url: string;
  token?: string | undefined;
  /** Defaults to 1.0. */
  protocolVersion?: string;
  fetch?: typeof fetch;
}

/** A2A JSON-RPC over HTTP, SSE for streams. */
export class HttpClientTransport implements ClientTransport {
  readonly kind = 'http' as const;
  private readonly endpoint: URL;
  private readonly base: URL;
  private nextId = 1;
  private readonly fetch: typeof fetch;

  private readonly opts: HttpTransportOptions;

  constructor(opts: HttpTransportOptions) {
    this.opts = opts;
    const u = new URL(opts.url);
    this.base = new URL('/', u);
    this.endpoint = u.pathname === '/' || u.pathname === '' ? new URL('/a2a', u) : u;
    this.fetch = opts.fetch ?? globalThis.fetch;
  }

  async request(method: string, params: unknown, opts: RequestOptions = {}): Promise<unknown> {
    const res = await this.post(method, params, 'application/json', opts);
    const body = await readJson(res);
    if ('error' in body) throw new A2AClientError(body.error, res.status);
    return body.result;
  }

  async *stream(method: string, params: unknown, opts: RequestOptions = {}): AsyncIterable<ClientStreamEvent> {
    const res = await this.post(method, params, 'text/event-stream', opts);
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const body = await readJson(res);
      if ('error' in body) throw new A2AClientError(body.error, res.status);
      throw new A2ATransportError(`expected an event stream from ${method}`);
    }
    if (!res.body) throw new A2ATransportError('the server sent an empty stream');
    for await (const ev of guard(readSse(res.body), this.base.origin)) {
      let msg: JsonRpcResponse;
      try {
        msg = JSON.parse(ev.data) as JsonRpcResponse;
      } catch (cause) {
        throw new A2ATransportError('the server sent an unreadable event', { cause });
      }
      if ('error' in msg) throw new A2AClientError(msg.error, res.status);
      yield { seq: ev.id !== undefined ? Number(ev.id) : 0, result: msg.result };
    }
  }

  async agentCard(): Promise<Record<string, unknown>> {
    const res = await this.send(new URL('/.well-known/agent-card.json', this.base), {
      headers: { 'A2A-Version': this.version },
    });
    if (!res.ok) throw new A2ATransportError(`could not read the Agent Card: HTTP ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  }

  async close(): Promise<void> {}

  private get version(): string {
    return this.opts.protocolVersion ?? '1.0';
  }

  private post(method: string, params: unknown, accept: string, opts: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept, 'A2A-Version': this.version };
    if (this.opts.token) headers['authorization'] = `Bearer ${this.opts.token}`;
    if (opts.lastEventSeq !== undefined) headers['last-event-id'] = String(opts.lastEventSeq);
    const init: RequestInit = {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
    };
    if (opts.signal) init.signal = opts.signal;
    return this.send(this.endpoint, init);
  }

  private async send(url: URL, init: RequestInit): Promise<Response> {
    try {
      return await this.fetch(url, init);
    } catch (cause) {
      if (cause instanceof Error && cause.name === 'AbortError') throw cause;
      throw new A2ATransportError(`cannot reach the agent server at ${this.base.origin}: ${describe(cause)}`, {
        cause,
      });
    }
  }
}

/** A stream cut off under us (the server died) is a transport failure, not an unknown error. */
async function* guard<T>(events: AsyncIterable<T>, origin: string): AsyncIterable<T> {
  try {
    yield* events;
  } catch (cause) {
    if (cause instanceof Error && cause.name === 'AbortError') throw cause;
    throw new A2ATransportError(`the stream from ${origin} broke off: ${describe(cause)}`, { cause });
  }
}

async function readJson(res: Response): Promise<JsonRpcResponse> {
  const text = await res.text();
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new A2ATransportError(`unexpected reply from the server (HTTP ${res.status}): ${text.slice(0, 200)}`);
  }
  const o = typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  // A JSON-RPC error is an object; a plain `{error: "not found", hint}` is the server saying that
  // this URL is no JSON-RPC endpoint (a wrong --server path): its words, not an empty message.
  if ('result' in o || (typeof o['error'] === 'object' && o['error'] !== null)) return v as JsonRpcResponse;
  const said = typeof o['error'] === 'string' ? o['error'] : text.slice(0, 200);
  const hint = typeof o['hint'] === 'string' ? o['hint'] : undefined;
  throw new A2ATransportError(`no JSON-RPC endpoint at ${res.url || 'this URL'} (HTTP ${res.status}): ${said}`, {
    hint,
  });
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

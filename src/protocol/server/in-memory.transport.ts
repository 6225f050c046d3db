import { LOCAL_PRINCIPAL, type Principal } from '../../application/index.ts';
import type { ProtocolVersion } from '../a2a/versions.ts';
import { A2AClientError } from '../client/client-error.ts';
import type { ClientStreamEvent, ClientTransport, RequestOptions } from '../client/transport.ts';
import type { Dispatcher } from './dispatcher.ts';

/** A client transport straight into a dispatcher in the same process (tests, embedding). */
export class InMemoryClientTransport implements ClientTransport {
  readonly kind = 'memory' as const;
  private nextId = 1;

  private readonly dispatcher: Dispatcher;
  private readonly cardOf: () => Record<string, unknown>;
  private readonly principal: Principal;
  private readonly version: ProtocolVersion;

  constructor(
    dispatcher: Dispatcher,
    cardOf: () => Record<string, unknown>,
    principal: Principal = LOCAL_PRINCIPAL,
    version: ProtocolVersion = '1.0',
  ) {
    this.dispatcher = dispatcher;
    this.cardOf = cardOf;
    this.principal = principal;
    this.version = version;
  }

  async request(method: string, params: unknown, opts: RequestOptions = {}): Promise<unknown> {
    const out = await this.dispatcher.dispatch(
      // A JSON round trip, so the in-memory path sees exactly what a wire would carry.
      JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params })),
      { principal: this.principal, version: this.version, signal: opts.signal ?? new AbortController().signal },
    );
    if (out.kind !== 'response') throw new Error(`${method} is a streaming method; use stream()`);
    const res = JSON.parse(JSON.stringify(out.response)) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (res.error) throw new A2AClientError(res.error);
    return res.result;
  }

  async *stream(method: string, params: unknown, opts: RequestOptions = {}): AsyncIterable<ClientStreamEvent> {
    const abort = new AbortController();
    opts.signal?.addEventListener('abort', () => abort.abort(), { once: true });
    const out = await this.dispatcher.dispatch(
      JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params })),
      {
        principal: this.principal,
        version: this.version,
        signal: abort.signal,
        lastEventSeq: opts.lastEventSeq,
      },
    );
    if (out.kind === 'response') {
      const res = JSON.parse(JSON.stringify(out.response)) as {
        error?: { code: number; message: string; data?: unknown };
      };
      if (res.error) throw new A2AClientError(res.error);
      throw new Error(`${method} is not a streaming method`);
    }
    if (out.kind !== 'stream') return;
    try {
      for await (const ev of out.events) {
        const res = JSON.parse(JSON.stringify(ev.response)) as {
          result?: unknown;
          error?: { code: number; message: string; data?: unknown };
        };
        if (res.error) throw new A2AClientError(res.error);
        yield { seq: ev.seq, result: res.result };
      }
    } finally {
      abort.abort();
    }
  }

  agentCard(): Promise<Record<string, unknown>> {
    return Promise.resolve(this.cardOf());
  }

  async close(): Promise<void> {}
}

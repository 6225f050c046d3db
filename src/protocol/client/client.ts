import type { z } from 'zod';
import type { MethodContract, StreamContract, UnaryContract } from '../a2a/contract.ts';
import { HttpClientTransport, type HttpTransportOptions } from './http.transport.ts';
import { StdioClientTransport, type StdioTransportOptions } from './stdio.transport.ts';
import type { ClientTransport, RequestOptions } from './transport.ts';

export interface TypedStreamEvent<T> {
  seq: number;
  event: T;
}

/**
 * The typed A2A client: the same interface over stdio, HTTP or in-memory. Calls are made with the
 * methods' contracts, so params and results are typed from the same schemas the server checks.
 *
 * ```ts
 * const client = await A2AClient.local();
 * const task = await client.call(getTask, { id });
 * for await (const { event } of client.stream(sendStreamingMessage, { message })) …
 * ```
 */
export class A2AClient {
  /**
   * The namespace every request acts in (sent as `tenant` unless a call names its own); undefined:
   * the caller's default namespace.
   */
  tenant: string | undefined;

  readonly transport: ClientTransport;

  constructor(transport: ClientTransport) {
    this.transport = transport;
  }

  private withTenant(params: unknown): unknown {
    if (this.tenant === undefined || params === null || typeof params !== 'object' || Array.isArray(params))
      return params;
    return 'tenant' in params ? params : { ...params, tenant: this.tenant };
  }

  /** Local mode: spawns `agents serve --stdio` and speaks over its pipes. */
  static async local(opts: StdioTransportOptions = {}): Promise<A2AClient> {
    return new A2AClient(await StdioClientTransport.connect(opts));
  }

  /** Server mode: HTTP (+SSE) to a running `agents serve`. */
  static remote(opts: HttpTransportOptions): A2AClient {
    return new A2AClient(new HttpClientTransport(opts));
  }

  async call<P extends z.ZodType, R extends z.ZodType>(
    method: UnaryContract<P, R>,
    params: z.input<P>,
    opts?: RequestOptions,
  ): Promise<z.output<R>> {
    return (await this.transport.request(method.name, this.withTenant(params), opts)) as z.output<R>;
  }

  async *stream<P extends z.ZodType, R extends z.ZodType>(
    method: StreamContract<P, R>,
    params: z.input<P>,
    opts?: RequestOptions,
  ): AsyncIterable<TypedStreamEvent<z.output<R>>> {
    for await (const ev of this.transport.stream(method.name, this.withTenant(params), opts))
      yield { seq: ev.seq, event: ev.result as z.output<R> };
  }

  /** Any method by name (for generic tools; prefer `call`). */
  raw(method: MethodContract | string, params: unknown, opts?: RequestOptions): Promise<unknown> {
    return this.transport.request(typeof method === 'string' ? method : method.name, this.withTenant(params), opts);
  }

  agentCard(): Promise<Record<string, unknown>> {
    return this.transport.agentCard();
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

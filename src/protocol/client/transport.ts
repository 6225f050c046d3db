/** One event of a streaming call: the per-task sequence number and the event itself. */
export interface ClientStreamEvent {
  seq: number;
  result: unknown;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Resume a task subscription after this sequence number. */
  lastEventSeq?: number;
}

/**
 * How a client reaches an agent: stdio to a spawned subprocess, HTTP to a server, or in-memory
 * (tests). Transports move messages; they do not know methods.
 */
export interface ClientTransport {
  readonly kind: 'stdio' | 'http' | 'memory';
  request(method: string, params: unknown, opts?: RequestOptions): Promise<unknown>;
  stream(method: string, params: unknown, opts?: RequestOptions): AsyncIterable<ClientStreamEvent>;
  /** The public Agent Card (stdio: from the handshake; HTTP: the well-known path). */
  agentCard(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * The MCP hub over `@modelcontextprotocol/sdk`: one connection per server definition, opened on
 * first use (concurrent first uses share it), dropped when the server dies and opened again on
 * the next use, stopped for good by close().
 */
import {
  McpUnavailable,
  type Logger,
  type McpCallResult,
  type McpHub,
  type McpToolInfo,
} from '../../application/index.js';
import type { McpServer } from '../../domain/registry/entities.js';
import { McpConnection } from './mcp-connection.js';
import { failedCall, firstLine, redact, stableJson } from './mcp-result.js';
import { connectFailure, Halt, raceAbort, secretsOf } from './mcp-support.js';

export interface SdkMcpHubOptions {
  logger: Logger;
  /** Starting, initializing and listing the tools of a server (default 20 s); a definition's connectTimeoutSeconds wins. */
  connectTimeoutMs?: number;
  /** One tool call (default 60 s); a definition's callTimeoutSeconds wins. */
  callTimeoutMs?: number;
}

export class SdkMcpHub implements McpHub {
  private readonly logger: Logger;
  private readonly connectTimeoutMs: number;
  private readonly callTimeoutMs: number;
  private readonly connections = new Map<string, Promise<McpConnection>>();
  /** Connections that ended by themselves, still being stopped (close() waits for them). */
  private readonly retiring = new Set<Promise<void>>();
  private readonly closed = new AbortController();
  private closing: Promise<void> | undefined;

  constructor(options: SdkMcpHubOptions) {
    this.logger = options.logger;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
    this.callTimeoutMs = options.callTimeoutMs ?? 60_000;
  }

  async listTools(server: McpServer, signal: AbortSignal): Promise<McpToolInfo[]> {
    const conn = await this.connection(server, signal);
    try {
      return await conn.listTools(signal, this.connectTimeout(server));
    } catch (err) {
      if (signal.aborted || (err instanceof Halt && err.kind === 'timeout'))
        throw this.unavailable(server, err, signal);
      const message = redact(err instanceof Error ? err.message : String(err), secretsOf(server));
      throw new McpUnavailable(
        server.name,
        `mcp server ${server.name} could not list its tools: ${message}`,
        'try again (a server that died is started again on next use)',
      );
    }
  }

  async callTool(
    server: McpServer,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<McpCallResult> {
    const label = `mcp:${server.name}/${tool}`;
    if (signal.aborted) return failedCall(label, 'cancelled');
    let conn: McpConnection;
    try {
      conn = await this.connection(server, signal);
    } catch (err) {
      if (signal.aborted) return failedCall(label, 'cancelled');
      const why = err instanceof McpUnavailable ? err : this.unavailable(server, err, signal);
      return {
        ok: false,
        summary: `${label} failed: ${firstLine(why.message)}`,
        output: `${why.message}\n(${why.hint})`,
      };
    }
    const callTimeout = server.callTimeoutSeconds !== undefined ? server.callTimeoutSeconds * 1000 : this.callTimeoutMs;
    return conn.call(tool, args, signal, callTimeout);
  }

  /** Stops every server (SIGTERM, then SIGKILL after 2 s) and awaits them; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed.abort(new Halt('closed'));
    const all = [...this.connections.values()];
    this.connections.clear();
    const stops = all.map((p) =>
      p.then(
        (conn) => conn.stop(),
        () => {},
      ),
    );
    await Promise.all([...stops, ...this.retiring]);
  }

  private connectTimeout(server: McpServer): number {
    return server.connectTimeoutSeconds !== undefined ? server.connectTimeoutSeconds * 1000 : this.connectTimeoutMs;
  }

  /** The server's live connection, opened when there is none (one open at a time per definition). */
  private async connection(server: McpServer, signal: AbortSignal): Promise<McpConnection> {
    const key = stableJson(server);
    // A connection that ended between its open and this use is replaced once.
    for (let attempt = 0; ; attempt++) {
      if (this.closed.signal.aborted) throw connectFailure(server, { kind: 'closed' });
      const pending = this.connections.get(key) ?? this.open(key, server);
      let conn: McpConnection;
      try {
        conn = await raceAbort(pending, signal);
      } catch (err) {
        if (err instanceof McpUnavailable) throw err;
        throw this.unavailable(server, err, signal);
      }
      if (conn.usable || attempt > 0) return conn;
      if (this.connections.get(key) === pending) this.connections.delete(key);
    }
  }

  private open(key: string, server: McpServer): Promise<McpConnection> {
    const forget = (): void => {
      if (this.connections.get(key) === opening) this.connections.delete(key);
    };
    const opening: Promise<McpConnection> = McpConnection.open(server, {
      logger: this.logger,
      connectTimeoutMs: this.connectTimeout(server),
      hubSignal: this.closed.signal,
      onLost: (conn) => {
        forget();
        const stopping = conn.stop();
        this.retiring.add(stopping);
        void stopping.finally(() => this.retiring.delete(stopping));
      },
    });
    // A failed open is forgotten, so the next use tries again.
    opening.catch(forget);
    this.connections.set(key, opening);
    return opening;
  }

  private unavailable(server: McpServer, err: unknown, signal: AbortSignal): McpUnavailable {
    if (signal.aborted)
      return new McpUnavailable(server.name, `mcp server ${server.name}: cancelled`, 'the caller gave up');
    if (err instanceof Halt && err.kind === 'timeout')
      return connectFailure(server, { kind: 'timeout', timeoutMs: this.connectTimeout(server) });
    return connectFailure(server, { kind: 'failed', error: err });
  }
}

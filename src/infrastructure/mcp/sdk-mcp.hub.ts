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
  type McpUse,
} from '../../application/index.ts';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { CommandConfinement } from '../tools/confinement.ts';
import type { McpServer } from '../../domain/registry/skill.definition.ts';
import { McpConnection, type OpenOptions } from './mcp-connection.ts';
import { redact } from '../../domain/secrets.ts';
import { failedCall, firstLine, stableJson } from './mcp-result.ts';
import { connectFailure, Halt, raceAbort, secretsOf } from './mcp-support.ts';

/** How a namespace's servers run on this agent. */
export interface McpPolicy {
  /** Stdio servers run confined (server mode: a member's program never runs unconfined). */
  confine: boolean;
  /** The server may reach loopback and private addresses (its namespace holds private-network). */
  privateNetwork: boolean;
}

export interface SdkMcpHubOptions {
  logger: Logger;
  /**
   * Server mode: the policy of a use's namespace (absent: local mode, where the user's own servers
   * run as the user configured them and reach what they like).
   */
  policy?: ((use: McpUse | undefined) => Promise<McpPolicy>) | undefined;
  /** How confined servers are started, and where each gets a private writable directory. */
  confinement?: { prepare: CommandConfinement['prepare']; scratchRoot: string } | undefined;
  /** The fetch of a streamable-HTTP server that may not reach private addresses (the egress guard's). */
  guardedFetch?: typeof fetch | undefined;
  /** Starting, initializing and listing the tools of a server (default 20 s); a definition's connectTimeoutSeconds wins. */
  connectTimeoutMs?: number;
  /** One tool call (default 60 s); a definition's callTimeoutSeconds wins. */
  callTimeoutMs?: number;
}

export class SdkMcpHub implements McpHub {
  private readonly logger: Logger;
  private readonly options: SdkMcpHubOptions;
  private readonly connectTimeoutMs: number;
  private readonly callTimeoutMs: number;
  private readonly connections = new Map<string, Promise<McpConnection>>();
  /** Connections that ended by themselves, still being stopped (close() waits for them). */
  private readonly retiring = new Set<Promise<void>>();
  private readonly closed = new AbortController();
  private closing: Promise<void> | undefined;

  constructor(options: SdkMcpHubOptions) {
    this.logger = options.logger;
    this.options = options;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
    this.callTimeoutMs = options.callTimeoutMs ?? 60_000;
  }

  async listTools(server: McpServer, signal: AbortSignal, use?: McpUse): Promise<McpToolInfo[]> {
    const conn = await this.connection(server, signal, use);
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
    use?: McpUse,
  ): Promise<McpCallResult> {
    const label = `mcp:${server.name}/${tool}`;
    if (signal.aborted) return failedCall(label, 'cancelled');
    let conn: McpConnection;
    try {
      conn = await this.connection(server, signal, use);
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
  private async connection(server: McpServer, signal: AbortSignal, use: McpUse | undefined): Promise<McpConnection> {
    const policy = this.options.policy ? await this.options.policy(use) : undefined;
    // One connection per definition and the way it runs (two namespaces' policies may differ).
    const key = policy ? `${policy.confine}|${policy.privateNetwork}|${stableJson(server)}` : stableJson(server);
    // A connection that ended between its open and this use is replaced once.
    for (let attempt = 0; ; attempt++) {
      if (this.closed.signal.aborted) throw connectFailure(server, { kind: 'closed' });
      const pending = this.connections.get(key) ?? this.open(key, server, policy);
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

  private open(key: string, server: McpServer, policy: McpPolicy | undefined): Promise<McpConnection> {
    const forget = (): void => {
      if (this.connections.get(key) === opening) this.connections.delete(key);
    };
    const opening: Promise<McpConnection> = this.launchOf(key, server, policy).then((how) =>
      McpConnection.open(server, {
        ...how,
        logger: this.logger,
        connectTimeoutMs: this.connectTimeout(server),
        hubSignal: this.closed.signal,
        onLost: (conn) => {
          forget();
          const stopping = conn.stop();
          this.retiring.add(stopping);
          void stopping.finally(() => this.retiring.delete(stopping));
        },
      }),
    );
    // A failed open is forgotten, so the next use tries again.
    opening.catch(forget);
    this.connections.set(key, opening);
    return opening;
  }

  /**
   * How the server is reached under the policy: a confined stdio server's command line (bubblewrap,
   * network only with private-network, a private writable directory), an HTTP server's fetch.
   */
  private async launchOf(
    key: string,
    server: McpServer,
    policy: McpPolicy | undefined,
  ): Promise<Pick<OpenOptions, 'launch' | 'fetch'>> {
    if (!policy) return {};
    if (!('command' in server))
      return policy.privateNetwork || !this.options.guardedFetch ? {} : { fetch: this.options.guardedFetch };
    if (!policy.confine) return {};
    const confinement = this.options.confinement;
    if (!confinement)
      throw connectFailure(server, { kind: 'failed', error: new Error('this server runs no MCP program unconfined') });
    const dir =
      server.cwd ?? path.join(confinement.scratchRoot, createHash('sha256').update(key).digest('hex').slice(0, 24));
    await mkdir(dir, { recursive: true, mode: 0o700 });
    try {
      return {
        launch: await confinement.prepare({
          program: server.command,
          args: server.args ?? [],
          cwd: dir,
          sandboxRoot: dir,
          network: policy.privateNetwork ? 'allow' : 'none',
          env: server.env,
        }),
      };
    } catch (err) {
      throw connectFailure(server, { kind: 'failed', error: err });
    }
  }

  private unavailable(server: McpServer, err: unknown, signal: AbortSignal): McpUnavailable {
    if (signal.aborted)
      return new McpUnavailable(server.name, `mcp server ${server.name}: cancelled`, 'the caller gave up');
    if (err instanceof Halt && err.kind === 'timeout')
      return connectFailure(server, { kind: 'timeout', timeoutMs: this.connectTimeout(server) });
    return connectFailure(server, { kind: 'failed', error: err });
  }
}

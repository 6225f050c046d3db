/**
 * One live connection to one MCP server (a child over stdio, or a streamable-HTTP session): opened
 * within a time limit, watched for its end, stopped for good. The SDK is imported on first use.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { type Logger, type McpCallResult, type McpToolInfo } from '../../application/index.ts';
import type { McpServer } from '../../domain/registry/skill.definition.ts';
import type { PreparedCommand } from '../tools/confinement.types.ts';
import { redact } from '../../domain/secrets.ts';
import { failedCall, firstLine, toCallResult } from './mcp-result.ts';
import { transportFor, type Sdk } from './mcp-transport.ts';
import {
  connectFailure,
  exitText,
  Halt,
  raceAbort,
  secretsOf,
  seconds,
  settled,
  tick,
  type ExitInfo,
} from './mcp-support.ts';

let sdk: Promise<Sdk> | undefined;
/** The SDK modules, imported once and only when a server is first used (start-up time of the CLI). */
function loadSdk(): Promise<Sdk> {
  sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([client, stdio, http, types]) => ({
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    McpError: types.McpError,
  }));
  return sdk;
}

const STDERR_TAIL_CHARS = 4096;
const KILL_GRACE_MS = 2000;
const MAX_LIST_PAGES = 1000;
const REQUEST_TIMEOUT = -32001; // the SDK's ErrorCode.RequestTimeout

export interface OpenOptions {
  logger: Logger;
  connectTimeoutMs: number;
  /** Aborted when the hub closes: an open still under way gives up. */
  hubSignal: AbortSignal;
  /** Called once when the connection ends by itself (a crash, a lost HTTP session); the hub then stops it. */
  onLost: (conn: McpConnection) => void;
  /** A stdio server started this way instead of its own command (confined); `release` once it exited. */
  launch?: PreparedCommand | undefined;
  /** The fetch of a streamable-HTTP server (the egress guard's; default the global fetch). */
  fetch?: typeof fetch | undefined;
}

/**
 * The SDK keeps its child process private; its exit code (for the error message) and a kill that
 * cannot hit a reused pid need it. Read from the pinned SDK's field; without it the pid is used.
 */
function childOf(transport: StdioClientTransport): ChildProcess | undefined {
  const child = (transport as unknown as { _process?: Partial<ChildProcess> })._process;
  return child && typeof child.kill === 'function' && typeof child.once === 'function'
    ? (child as ChildProcess)
    : undefined;
}

/** HTTP transport errors that mean the session is gone (the server died or forgot it). */
function httpConnectionFailed(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return (
    err instanceof TypeError ||
    code === 404 ||
    /SSE stream disconnected|Failed to reconnect|Maximum reconnection|fetch failed|ECONN|socket|terminated/i.test(
      err.message,
    )
  );
}

export class McpConnection {
  /** The server's tools while the connection lives (cleared when the server says they changed). */
  private tools: McpToolInfo[] | undefined;
  private listing: Promise<McpToolInfo[]> | undefined;
  private generation = 0;
  private readonly calls = new Set<AbortController>();
  private child: ChildProcess | undefined;
  private exit: ExitInfo | undefined;
  /** The transport error that ended the connection (HTTP), or the last one seen (stdio). */
  private transportError: string | undefined;
  /** Set when the connection ended while its child still ran (it is stopped then): why. */
  private brokenBy: string | undefined;
  private stderr = '';
  private ready = false;
  private lost = false;
  private stopping: Promise<void> | undefined;
  private markExited!: () => void;
  private readonly exited = new Promise<void>((resolve) => (this.markExited = resolve));
  private readonly secrets: string[];
  readonly label: string;

  readonly server: McpServer;
  private readonly sdk: Sdk;
  private readonly client: Client;
  private readonly transport: StdioClientTransport | StreamableHTTPClientTransport;
  private readonly options: OpenOptions;

  private constructor(
    server: McpServer,
    sdk: Sdk,
    client: Client,
    transport: StdioClientTransport | StreamableHTTPClientTransport,
    options: OpenOptions,
  ) {
    this.server = server;
    this.sdk = sdk;
    this.client = client;
    this.transport = transport;
    this.options = options;
    this.label = `mcp server ${server.name}`;
    this.secrets = secretsOf(server);
  }

  /** Starts the server (or opens the session), initializes it and lists its tools, within the connect timeout. */
  static async open(server: McpServer, options: OpenOptions): Promise<McpConnection> {
    const sdk = await loadSdk();
    if ('command' in server && server.cwd !== undefined && !existsSync(server.cwd))
      throw connectFailure(server, { kind: 'cwd' });
    const transport = transportFor(sdk, server, options.launch, options.fetch);
    const client = new sdk.Client({ name: 'cleveragents', version: '0.1.0' }, { capabilities: {} });
    const conn = new McpConnection(server, sdk, client, transport, options);
    conn.watch();
    const timeoutMs = options.connectTimeoutMs;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Halt('timeout')), timeoutMs);
    const onHubClose = (): void => ac.abort(new Halt('closed'));
    options.hubSignal.addEventListener('abort', onHubClose, { once: true });
    if (options.hubSignal.aborted) onHubClose();
    try {
      await raceAbort(client.connect(transport, { signal: ac.signal, timeout: timeoutMs }), ac.signal);
      await conn.fetchTools(ac.signal, timeoutMs);
      conn.ready = true;
      options.logger.info(
        { server: server.name, pid: conn.child?.pid, tools: conn.tools?.length },
        'mcp server connected',
      );
      return conn;
    } catch (err) {
      await tick();
      const exitedByItself = conn.exit !== undefined;
      await conn.stop();
      const reason = ac.signal.reason as unknown;
      const halted = reason instanceof Halt ? (reason.kind === 'timeout' ? 'timeout' : 'closed') : undefined;
      const failure = connectFailure(server, {
        kind: halted ?? (exitedByItself ? 'exited' : 'failed'),
        error: err,
        exit: conn.exit,
        stderr: conn.stderr,
        timeoutMs,
        secrets: conn.secrets,
      });
      options.logger.warn({ server: server.name, reason: failure.message }, 'mcp server unavailable');
      throw failure;
    } finally {
      clearTimeout(timer);
      options.hubSignal.removeEventListener('abort', onHubClose);
    }
  }

  /** Hooks the transport's events: stderr kept, the end of the child or the session noticed, errors logged. */
  private watch(): void {
    const t = this.transport;
    t.onclose = () => {
      this.markExited();
      this.lose();
    };
    t.onerror = (err: Error) => {
      const message = redact(err.message, this.secrets);
      this.options.logger.debug({ server: this.server.name, err: message }, 'mcp transport');
      if (this.lost || this.stopping) return;
      this.transportError = message;
      if (!('pid' in t) && httpConnectionFailed(err)) {
        this.brokenBy = `the connection to ${this.label} failed: ${message}`;
        this.lose();
      }
    };
    this.client.onerror = (err: Error) =>
      this.options.logger.debug({ server: this.server.name, err: redact(err.message, this.secrets) }, 'mcp client');
    this.client.setNotificationHandler(this.sdk.ToolListChangedNotificationSchema, () => {
      this.generation += 1;
      this.tools = undefined;
    });
    if ('pid' in t) {
      const stderr = t.stderr;
      stderr?.on('data', (chunk: Buffer | string) => {
        this.stderr = (this.stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS);
      });
      stderr?.on('error', () => {});
      const start = t.start.bind(t);
      t.start = async () => {
        await start();
        this.child = childOf(t);
        this.child?.once('exit', (code, signal) => {
          this.exit = { code, signal };
          // A confined server's process-count group goes with it.
          void this.options.launch?.release().catch(() => undefined);
          this.markExited();
        });
      };
    }
  }

  /** The connection ended by itself: calls in flight end, the hub forgets it (the next use opens anew). */
  private lose(): void {
    if (!this.ready || this.lost || this.stopping) return;
    this.lost = true;
    // A stdio transport that closed on its own while the child runs (unreadable output): say so, not "exited".
    if (this.child && this.exit === undefined && this.child.exitCode === null)
      this.brokenBy ??= `${this.label} broke the connection: ${this.transportError ?? 'its stdio closed'}`;
    for (const call of this.calls) call.abort(new Halt('lost'));
    this.options.onLost(this);
    void tick().then(() =>
      this.options.logger.warn({ server: this.server.name, reason: this.lostReason().short }, 'mcp server lost'),
    );
  }

  /** Why the connection ended: one line (the last stderr line), and the whole story (the stderr tail). */
  private lostReason(): { short: string; detail: string } {
    if (this.brokenBy !== undefined) return { short: firstLine(this.brokenBy), detail: this.brokenBy };
    const tail = redact(this.stderr.trim(), this.secrets);
    const lastLine = tail.split('\n').pop() ?? '';
    const head = `${this.label} ${exitText(this.exit)}`;
    return { short: firstLine(lastLine ? `${head}: ${lastLine}` : head), detail: tail ? `${head}: ${tail}` : head };
  }

  /** The server's tools (cached while the connection lives). */
  async listTools(signal: AbortSignal, timeoutMs: number): Promise<McpToolInfo[]> {
    if (this.tools) return [...this.tools];
    if (!this.listing) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new Halt('timeout')), timeoutMs);
      this.listing = this.fetchTools(ac.signal, timeoutMs).finally(() => {
        clearTimeout(timer);
        this.listing = undefined;
      });
    }
    return [...(await raceAbort(this.listing, signal))];
  }

  private async fetchTools(signal: AbortSignal, timeoutMs: number): Promise<McpToolInfo[]> {
    const generation = this.generation;
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.client.listTools(cursor === undefined ? {} : { cursor }, {
        signal,
        timeout: timeoutMs,
      });
      tools.push(...result.tools.map(toolInfo));
      cursor = result.nextCursor;
      if (cursor === undefined || seen.has(cursor)) break;
      seen.add(cursor);
    }
    if (generation === this.generation) this.tools = tools;
    return tools;
  }

  /** Whether calls can go through this connection (it has not ended nor been stopped). */
  get usable(): boolean {
    return !this.lost && this.stopping === undefined;
  }

  /** Calls a tool; every failure comes back as ok:false. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<McpCallResult> {
    const label = `mcp:${this.server.name}/${tool}`;
    if (this.lost || this.stopping) return failedCall(label, `failed: ${this.label} is not connected; try again`);
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(new Halt('cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    this.calls.add(ac);
    try {
      const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: ac.signal,
        timeout: timeoutMs,
      });
      return toCallResult(label, result);
    } catch (err) {
      await tick();
      const halt = ac.signal.reason instanceof Halt ? ac.signal.reason.kind : undefined;
      if (this.lost) {
        const why = this.lostReason();
        return {
          ok: false,
          summary: `${label} failed: ${why.short} (restarted on next use)`,
          output: `${label} failed: ${why.detail}\n(${this.label} is started again on next use)`,
        };
      }
      if (halt === 'cancelled') return failedCall(label, 'cancelled');
      if (halt === 'closed') return failedCall(label, 'failed: the MCP hub was closed');
      if (err instanceof this.sdk.McpError && err.code === REQUEST_TIMEOUT)
        return failedCall(label, `timed out after ${seconds(timeoutMs)}`);
      const message = redact(err instanceof Error ? err.message : String(err), this.secrets);
      return failedCall(label, `failed: ${message}`);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.calls.delete(ac);
    }
  }

  /** Ends the connection for good: calls in flight end, the child is stopped (SIGTERM, then SIGKILL) and awaited. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    for (const call of this.calls) call.abort(new Halt('closed'));
    const t = this.transport;
    if (!('pid' in t)) {
      await settled(
        t.terminateSession().catch(() => {}),
        1000,
      );
      await this.client.close().catch(() => {});
      return;
    }
    const child = this.child;
    const pid = child?.pid ?? t.pid ?? undefined;
    // The SDK's close ends the child's stdin (a polite server exits on that); the signals do not wait for it.
    void this.client.close().catch(() => {});
    if (pid === undefined || this.exit !== undefined || (child && child.exitCode !== null)) return;
    const kill = (signal: NodeJS.Signals): void => {
      try {
        if (child) child.kill(signal);
        else process.kill(pid, signal);
      } catch {
        // gone already
      }
    };
    kill('SIGTERM');
    if (await settled(this.exited, KILL_GRACE_MS)) return;
    this.options.logger.warn({ server: this.server.name, pid }, 'mcp server ignored SIGTERM; killing it');
    kill('SIGKILL');
    await settled(this.exited, KILL_GRACE_MS);
  }
}

function toolInfo(tool: Tool): McpToolInfo {
  const schema = (tool.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object' };
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? '',
    inputSchema: schema,
    readOnly: tool.annotations?.readOnlyHint === true,
  };
}

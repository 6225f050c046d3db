import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Channel } from '../../domain/async-channel.ts';
import { AGENT_NODE_ARGS, AGENT_OWN_GROUP, agentEnv } from './agent-env.ts';
import { STDIO_METHODS, type StreamEventParams } from '../a2a/stdio-binding.ts';
import { EXTENSION_URI } from '../a2a/versions.ts';
import type { JsonRpcErrorObject } from '../jsonrpc/envelope.ts';
import { createLineFramer, frame } from '../jsonrpc/framing.ts';
import { A2AClientError, A2ATransportError } from './client-error.ts';
import type { ClientStreamEvent, ClientTransport, RequestOptions } from './transport.ts';

export interface StdioTransportOptions {
  /** The program to run; defaults to this Node.js running the `agents` bin of this package. */
  command?: string;
  /** Its arguments; defaults to `<bin> serve --stdio` plus `extraArgs`. */
  args?: string[];
  /**
   * The `agents` bin script that `<bin>` stands for; defaults to this package's dist/src/main/bin.js
   * (inside the bundle: the bundle's agents.js).
   */
  bin?: string;
  extraArgs?: string[];
  /**
   * The agent, already spawned by the caller with this command, arguments, environment and
   * stderr (the CLI spawns it before loading its commands): used instead of spawning one.
   */
  spawned?: ChildProcess;
  /** The agent's environment (default: this process's), given glibc's malloc setting of agentEnv. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** What to do with the agent's log output (stderr). Default: keep the last lines for errors. */
  stderr?: 'inherit' | 'capture' | 'ignore';
  /** Each line the agent logs (with `stderr: 'capture'`), for a client that shows the agent's log. */
  onStderr?: (line: string) => void;
  protocolVersion?: string;
  clientInfo?: { name: string; version?: string };
}

export interface InitializeResult {
  protocolVersion: string;
  supportedVersions: string[];
  extensions: string[];
  serverInfo: { name: string; version: string };
  agentCard: Record<string, unknown>;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  events?: Channel<ClientStreamEvent>;
}

/**
 * The agent's entry: the bundle's own inside the bundle, else the bin beside this module — tsc's
 * (dist/src/protocol/client) or, when Node runs the TypeScript sources (the tests), src/main/bin.ts.
 */
const HERE = new URL('.', import.meta.url);
const DEFAULT_BIN = fileURLToPath(
  HERE.pathname.endsWith('/bundle/')
    ? new URL('agents.js', HERE)
    : new URL(import.meta.url.endsWith('.ts') ? '../../main/bin.ts' : '../../main/bin.js', import.meta.url),
);

/** A2A JSON-RPC over the pipes of a spawned `agents serve --stdio` (DESIGN.md §3.5). */
export class StdioClientTransport implements ClientTransport {
  readonly kind = 'stdio' as const;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly stderrTail: string[] = [];
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Why the agent is gone, as the requests under way were told: later requests are told the same. */
  private exitReason = 'the agent process has exited';
  private readonly exitPromise: Promise<void>;
  private init: InitializeResult | undefined;

  private readonly child: ChildProcess;

  private constructor(child: ChildProcess, onStderr?: (line: string) => void) {
    this.child = child;
    const framer = createLineFramer(
      (line) => this.onLine(line),
      () => this.failAll(new A2ATransportError('the agent sent a message over the size limit')),
      64 * 1024 * 1024,
    );
    child.stdout?.on('data', (c: Buffer) => framer.push(c));
    child.stderr?.on('data', (c: Buffer) => {
      for (const line of c.toString('utf8').split('\n'))
        if (line.trim()) {
          this.stderrTail.push(line);
          onStderr?.(line);
        }
      if (this.stderrTail.length > 20) this.stderrTail.splice(0, this.stderrTail.length - 20);
    });
    child.stdin?.on('error', () => {});
    this.exitPromise = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        const tail = this.stderrTail.length ? `\n${this.stderrTail.slice(-5).join('\n')}` : '';
        this.exitReason = `the agent process exited (${signal ?? `code ${code}`})${tail}`;
        this.failAll(new A2ATransportError(this.exitReason));
        resolve();
      });
      child.on('error', (err) => {
        this.exitInfo = { code: null, signal: null };
        this.exitReason = `could not start the agent process: ${err.message}`;
        this.failAll(new A2ATransportError(this.exitReason, { cause: err }));
        resolve();
      });
    });
  }

  /** Spawns the agent and performs the `initialize` handshake. */
  static async connect(opts: StdioTransportOptions = {}): Promise<StdioClientTransport> {
    const command = opts.command ?? process.execPath;
    const args = opts.args ?? [
      ...AGENT_NODE_ARGS,
      opts.bin ?? DEFAULT_BIN,
      'serve',
      '--stdio',
      ...(opts.extraArgs ?? []),
    ];
    const stderr = opts.stderr ?? 'capture';
    const env = opts.env ?? process.env;
    const child =
      opts.spawned ??
      spawn(command, args, {
        stdio: ['pipe', 'pipe', stderr === 'capture' ? 'pipe' : stderr],
        // Our own agent gets a local agent's environment; another program, the one it was given.
        env: opts.command === undefined ? agentEnv(env) : env,
        cwd: opts.cwd,
        // Out of the terminal's reach: Ctrl-C is the client's to handle (see AGENT_OWN_GROUP).
        detached: AGENT_OWN_GROUP,
      });
    const t = new StdioClientTransport(child, opts.onStderr);
    try {
      t.init = (await t.request(STDIO_METHODS.initialize, {
        protocolVersion: opts.protocolVersion ?? '1.0',
        extensions: [EXTENSION_URI],
        clientInfo: opts.clientInfo ?? { name: 'cleveragents-client' },
      })) as InitializeResult;
    } catch (err) {
      await t.close();
      throw err;
    }
    return t;
  }

  /** What the agent said in the handshake. */
  get handshake(): InitializeResult | undefined {
    return this.init;
  }

  /**
   * Settles when the agent process has gone (exited, killed, or never started), with how; a
   * long-lived client uses it to notice a dead agent before its next call.
   */
  get exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exitPromise.then(() => this.exitInfo ?? { code: null, signal: null });
  }

  /** The agent subprocess's pid (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  request(method: string, params: unknown, opts: RequestOptions = {}): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = this.send(method, params, { resolve, reject }, opts.signal);
      if (id === undefined) return;
    });
  }

  stream(method: string, params: unknown, opts: RequestOptions = {}): AsyncIterable<ClientStreamEvent> {
    let id: number | undefined;
    const events = new Channel<ClientStreamEvent>(() => {
      // Leaving the loop early cancels the request on the agent's side.
      if (id !== undefined && this.pending.has(id)) {
        this.pending.delete(id);
        this.notify(STDIO_METHODS.cancel, { id });
      }
    });
    id = this.send(method, params, { resolve: () => events.end(), reject: (e) => events.fail(e), events }, opts.signal);
    return events;
  }

  agentCard(): Promise<Record<string, unknown>> {
    if (!this.init) return Promise.reject(new A2ATransportError('not initialized'));
    return Promise.resolve(this.init.agentCard);
  }

  /** Closes stdin, then escalates: SIGTERM after 3 s, SIGKILL after 2 s more. */
  async close(): Promise<void> {
    if (this.exitInfo) return;
    this.child.stdin?.end();
    const timer1 = setTimeout(() => this.child.kill('SIGTERM'), 3000);
    const timer2 = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exitPromise;
    clearTimeout(timer1);
    clearTimeout(timer2);
  }

  private send(method: string, params: unknown, p: Pending, signal?: AbortSignal): number | undefined {
    if (this.exitInfo) {
      p.reject(new A2ATransportError(this.exitReason));
      return undefined;
    }
    const id = this.nextId++;
    if (signal?.aborted) {
      p.reject(signal.reason ?? new Error('aborted'));
      return undefined;
    }
    const onAbort = (): void => {
      if (!this.pending.delete(id)) return;
      this.notify(STDIO_METHODS.cancel, { id });
      p.reject(signal?.reason ?? new Error('aborted'));
    };
    // The listener goes when the request settles, so a long-lived signal does not collect them.
    const settle =
      <T>(fn: (v: T) => void) =>
      (v: T): void => {
        signal?.removeEventListener('abort', onAbort);
        fn(v);
      };
    this.pending.set(id, {
      resolve: settle(p.resolve),
      reject: settle(p.reject),
      ...(p.events ? { events: p.events } : {}),
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    this.child.stdin?.write(frame({ jsonrpc: '2.0', id, method, params }));
    return id;
  }

  private notify(method: string, params: unknown): void {
    if (!this.exitInfo) this.child.stdin?.write(frame({ jsonrpc: '2.0', method, params }));
  }

  private onLine(line: string): void {
    let msg: {
      id?: unknown;
      method?: string;
      params?: Partial<StreamEventParams>;
      result?: unknown;
      error?: JsonRpcErrorObject;
    };
    try {
      msg = JSON.parse(line) as typeof msg;
    } catch {
      return; // not protocol: ignore rather than die (stdout is protocol-only on our side)
    }
    if (msg.method === STDIO_METHODS.streamEvent && msg.params) {
      const p = this.pending.get(Number(msg.params.requestId));
      p?.events?.push({ seq: msg.params.seq ?? 0, result: msg.params.event });
      return;
    }
    if (typeof msg.id !== 'number') return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.error) p.reject(new A2AClientError(msg.error));
    else p.resolve(msg.result);
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

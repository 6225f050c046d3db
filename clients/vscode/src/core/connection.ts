import { A2AClient, A2ATransportError, StdioClientTransport, whoami } from '../../../../src/protocol/client/index.ts';
import { ExtensionError, errorView, type ErrorView } from './errors.ts';

/** Where the agent is: a local `agents serve --stdio` the extension spawns, or a server. */
export type Target =
  | {
      mode: 'local';
      /** The program to run (`agents`), or a `.js` bin run with `node`. */
      agentPath: string;
      /** The Node.js that runs a `.js` agentPath (default: `node` from PATH). */
      node?: string;
      dataDir?: string;
      namespace?: string;
      cwd?: string;
      env?: NodeJS.ProcessEnv;
    }
  | { mode: 'remote'; url: string; token?: string; namespace?: string };

export type ConnectionState =
  | { kind: 'idle' }
  | { kind: 'connecting' }
  | { kind: 'connected'; agent: string; mode: 'local' | 'remote' }
  | { kind: 'failed'; error: ErrorView }
  | { kind: 'exited'; error: ErrorView };

/** The program and arguments that run the local agent on stdio. */
export function agentCommand(t: Extract<Target, { mode: 'local' }>): { command: string; args: string[] } {
  const path = t.agentPath.trim();
  if (path === '') throw new ExtensionError('cleveragents.agentPath is empty', 'set it to the agents program');
  const serve = ['serve', '--stdio', ...(t.dataDir ? ['--data-dir', t.dataDir] : [])];
  // A bin script runs under node: the extension host's own executable is Electron, not Node.js.
  if (/\.(c|m)?js$/.test(path)) return { command: t.node ?? 'node', args: [path, ...serve] };
  return { command: path, args: serve };
}

/**
 * The extension's one connection to the agent. It connects on first use, and after the local agent
 * dies it says so (state `exited`, with the agent's last log lines) and starts a new one on the
 * next request; a request that was under way fails with the transport's message.
 */
export class Connection {
  private current: Promise<A2AClient> | undefined;
  private listeners = new Set<(s: ConnectionState) => void>();
  private stateNow: ConnectionState = { kind: 'idle' };
  private closing = false;

  private target: Target;
  private readonly log: (line: string) => void;

  constructor(target: Target, log: (line: string) => void = () => {}) {
    this.target = target;
    this.log = log;
  }

  get state(): ConnectionState {
    return this.stateNow;
  }

  onState(fn: (s: ConnectionState) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The connected client: the live one, or a new connection (a fresh agent in local mode). */
  client(): Promise<A2AClient> {
    if (!this.current) {
      const attempt = this.open();
      this.current = attempt;
      attempt.catch(() => {
        if (this.current === attempt) this.current = undefined;
      });
    }
    return this.current;
  }

  /** Runs `fn` with the client; a failure to connect is thrown as the connection's error. */
  async with<T>(fn: (client: A2AClient) => Promise<T>): Promise<T> {
    return fn(await this.client());
  }

  /** New settings (or a new token): the old connection is closed, the next request uses these. */
  async reconfigure(target: Target): Promise<void> {
    this.target = target;
    await this.close();
    this.setState({ kind: 'idle' });
  }

  /** Closes the connection (and stops the local agent); the next request opens a new one. */
  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    if (!current) return;
    this.closing = true;
    try {
      await (await current).close();
    } catch {
      // it never connected: nothing to close
    } finally {
      this.closing = false;
    }
  }

  private async open(): Promise<A2AClient> {
    this.setState({ kind: 'connecting' });
    const t = this.target;
    try {
      const client = t.mode === 'local' ? await this.spawn(t) : await this.remote(t);
      if (t.namespace) client.tenant = t.namespace;
      const card = await client.agentCard();
      const name = typeof card['name'] === 'string' ? card['name'] : 'agent';
      this.setState({ kind: 'connected', agent: name, mode: t.mode });
      return client;
    } catch (err) {
      this.setState({ kind: 'failed', error: errorView(err) });
      throw err;
    }
  }

  private async spawn(t: Extract<Target, { mode: 'local' }>): Promise<A2AClient> {
    const { command, args } = agentCommand(t);
    this.log(`starting ${command} ${args.join(' ')}`);
    const client = await A2AClient.local({
      command,
      args,
      stderr: 'capture',
      onStderr: this.log,
      clientInfo: { name: 'cleveragents-vscode' },
      ...(t.env ? { env: t.env } : {}),
      ...(t.cwd ? { cwd: t.cwd } : {}),
    });
    const transport = client.transport;
    if (transport instanceof StdioClientTransport) {
      const me = this.current;
      void transport.exited.then(({ code, signal }) => {
        if (this.closing || (this.current !== me && this.current !== undefined)) return;
        this.current = undefined;
        const how = signal ?? `code ${code}`;
        this.log(`the agent exited (${how})`);
        this.setState({
          kind: 'exited',
          error: errorView(new A2ATransportError(`the agent process exited (${how})`)),
        });
      });
    }
    return client;
  }

  private async remote(t: Extract<Target, { mode: 'remote' }>): Promise<A2AClient> {
    let url: URL;
    try {
      url = new URL(t.url);
    } catch {
      throw new ExtensionError(`cleveragents.serverUrl is not a URL: ${t.url}`, 'for example http://127.0.0.1:8080');
    }
    const client = A2AClient.remote({ url: url.toString().replace(/\/$/, ''), ...(t.token ? { token: t.token } : {}) });
    // A call that needs the token proves the server and the token now, not at the first real use.
    await client.call(whoami, {});
    return client;
  }

  private setState(s: ConnectionState): void {
    this.stateNow = s;
    for (const fn of this.listeners) fn(s);
  }
}

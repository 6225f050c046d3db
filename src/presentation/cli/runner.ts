import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import type { A2AClient } from '../../protocol/client/index.ts';
import {
  configPath,
  loadConfig,
  resolveConnection,
  resolveFormat,
  type Connection,
  type FileConfig,
  resolveNamespace,
  type GlobalFlags,
} from './config.ts';
import { connect } from './connect.ts';
import { credentialsPath, loadCredentials, refreshIfExpired } from './credential-store.ts';
import { declaredCallsOf } from './cli-command.ts';
import { declaredClient } from './declared-client.ts';
import type { EarlyAgent } from './early-agent.ts';
import { EXIT_CODES, exitReasonOf, type ExitReason } from './exit-codes.ts';
import { ExitStatus } from './exit-status.ts';
import { buildEnvelope, serializeEnvelope, type EnvelopeMessage } from './render/envelope.render.ts';
import { renderError, reportOf, type Target } from './render/error.render.ts';
import { isOutputFormat } from './render/format.ts';
import { Ui, type CliIo } from './render/ui.ts';
import { eventsWanted } from './support/events.ts';

/** What a command gets: its output, the client (connected on first use), and Ctrl-C. */
export interface RunContext {
  readonly ui: Ui;
  readonly io: CliIo;
  /** Aborted on Ctrl-C: pass it to every request so the agent stops the work. */
  readonly signal: AbortSignal;
  client(): Promise<A2AClient>;
  /** A client of another server or with another token (`agents login` verifying a key); closed after the command. */
  connectTo(url: string, token: string): Promise<A2AClient>;
  /** Cancels the command as Ctrl-C does (for when readline catches the key itself). */
  interrupt(): void;
  /** The local agent or the server the client talks to (for hints about an unreachable one). */
  readonly target: Target;
  /** config.yaml as read at the command's start (its defaults: defaultActor, defaultProject, …). */
  readonly config: FileConfig;
}

/** A command's result: the envelope's data, and why it ends (OK unless said otherwise). */
export interface Outcome {
  data: unknown;
  /**
   * Why the command ends. 'INTERRUPTED': it stopped on Ctrl-C and has said how itself (a canceled
   * turn's line), so the Runner adds no "interrupted" line of its own in people's formats.
   */
  exit?: ExitReason | undefined;
  /** The command failed after gathering data worth keeping: reported like a thrown error, with `data`. */
  error?: unknown;
}

export type CommandFn = (ctx: RunContext) => Promise<Outcome>;

/** The clients a command opened: the one it talks to (made on first use) and any others. */
interface Opened {
  pending?: Promise<A2AClient> | undefined;
  extra: Array<Promise<A2AClient>>;
}

/**
 * Runs commands: resolves format and connection, connects lazily, always closes the client (so a
 * spawned agent exits), turns errors and Ctrl-C into exit codes, prints the json/yaml envelope.
 */
export class Runner extends ExitStatus {
  readonly version: string;
  /** The `agents` script a local agent is spawned from (default: the protocol client's own choice). */
  readonly agentBin?: string | undefined;
  /** The local agent bin.ts spawned before the commands loaded, if any. */
  readonly early?: EarlyAgent | undefined;

  constructor(version: string, io: CliIo, agentBin?: string, early?: EarlyAgent) {
    super(io);
    this.version = version;
    this.agentBin = agentBin;
    this.early = early;
  }

  /**
   * `opts.local`: the command talks to the local agent even when a server is configured (sync and
   * `agents server …` run in the local agent, which talks to the server itself); no tenant is sent.
   * `opts.protocolStdout`: stdout carries a protocol (`agents acp`), so a json/yaml envelope goes to stderr.
   */
  async run(
    cmd: Command,
    name: string,
    fn: CommandFn,
    opts: { local?: boolean; protocolStdout?: boolean } = {},
  ): Promise<void> {
    const startedAt = new Date();
    const t0 = performance.now();
    const flags = cmd.optsWithGlobals<GlobalFlags>();
    const env = this.io.env;
    const tty = this.io.stdout.isTTY === true;
    let ui = new Ui(
      isOutputFormat(flags.format) ? flags.format : tty ? 'rich' : 'plain',
      this.io,
      flags.color === false,
    );
    const ac = new AbortController();
    // Every request of a command listens to this one signal (a plan run makes dozens).
    setMaxListeners(0, ac.signal);
    const onSigint = (): void => {
      // A second Ctrl-C means "now".
      if (ac.signal.aborted) process.exit(EXIT_CODES.INTERRUPTED);
      ac.abort();
    };
    process.on('SIGINT', onSigint);

    // What the command declared where it was registered (`.calls(…)`): its client refuses anything else.
    const declared = declaredCallsOf(cmd);
    let target: Target = { kind: 'local' };
    const opened: Opened = { extra: [] };
    let outcome: Outcome | undefined;
    let failure: { err: unknown } | undefined;
    try {
      const file = loadConfig(configPath(env));
      ui = new Ui(resolveFormat(flags.format, env, file, tty), this.io, flags.color === false);
      const conn = await connectionOf(flags, env, file, opts.local === true);
      const namespace = opts.local ? undefined : resolveNamespace(flags, env, file);
      if (conn.kind === 'server') {
        target = { kind: 'server', url: conn.url, ...(conn.stored !== undefined ? { login: true } : {}) };
        if (flags.dataDir) ui.warn('--data-dir is ignored in server mode (the server owns its storage)');
      }
      const ctx = this.contextOf({ name, declared, config: file }, ui, conn, namespace, ac, target, opened);
      outcome = await fn(ctx);
      if (outcome.error !== undefined) failure = { err: outcome.error };
    } catch (err) {
      failure = { err };
    } finally {
      if (opened.pending) await opened.pending.then((c) => c.close()).catch(() => undefined);
      for (const c of opened.extra) await c.then((cl) => cl.close()).catch(() => undefined);
      process.off('SIGINT', onSigint);
    }

    this.finish(name, flags, ui, { outcome, failure, aborted: ac.signal.aborted, target, startedAt, t0 }, opts);
  }

  /** The command's context; the clients it opens are kept in `opened`, for the runner to close. */
  private contextOf(
    { name, declared, config }: { name: string; declared: ReturnType<typeof declaredCallsOf>; config: FileConfig },
    ui: Ui,
    conn: Connection,
    namespace: string | undefined,
    ac: AbortController,
    target: Target,
    opened: Opened,
  ): RunContext {
    const env = this.io.env;
    return {
      ui,
      io: this.io,
      config,
      signal: ac.signal,
      client: () =>
        (opened.pending ??= connect(conn, this.version, env, this.agentBin, this.early).then((c) => {
          c.tenant = namespace;
          return declaredClient(name, declared, c, env);
        })),
      connectTo: (url, token) => {
        const c = connect({ kind: 'server', url, token }, this.version, env).then((cl) =>
          declaredClient(name, declared, cl, env),
        );
        opened.extra.push(c);
        return c;
      },
      interrupt: () => ac.abort(),
      target,
    };
  }

  /** How every command ends: its exit code, its error said on stderr, and (json/yaml) the envelope. */
  private finish(
    name: string,
    flags: GlobalFlags,
    ui: Ui,
    end: {
      outcome: Outcome | undefined;
      failure: { err: unknown } | undefined;
      aborted: boolean;
      target: Target;
      startedAt: Date;
      t0: number;
    },
    opts: { protocolStdout?: boolean },
  ): void {
    const { outcome, failure, target, startedAt, t0 } = end;
    let reason: ExitReason = outcome?.exit ?? 'OK';
    let data = outcome?.data;
    if (end.aborted) reason = 'INTERRUPTED';
    else if (failure) reason = exitReasonOf(failure.err);
    const code = EXIT_CODES[reason];
    const messages: EnvelopeMessage[] = [...ui.messages];
    if (failure || reason === 'INTERRUPTED') {
      const report = reportOf(failure?.err, reason, target);
      data = { ...(isRecord(data) ? data : {}), error: report };
      messages.push({ level: 'error', text: report.message });
      if (report.hint) messages.push({ level: 'hint', text: report.hint });
      const saidSo = !failure && outcome?.exit === 'INTERRUPTED';
      if (ui.human && !saidSo) ui.rawErr(renderError(report, reason, { rich: ui.rich, pal: ui.errPal }));
    }
    if (!ui.human) {
      const envelope = buildEnvelope(name, code, data, startedAt, performance.now() - t0, messages);
      // After --events lines, the envelope is the last line of the stream.
      (opts.protocolStdout ? this.io.stderr : this.io.stdout).write(
        eventsWanted(flags, ui.format)
          ? `${JSON.stringify(envelope)}\n`
          : serializeEnvelope(envelope, ui.format as 'json' | 'yaml'),
      );
    }
    this.exitCode = code;
  }
}

/**
 * Where the command's requests go: the local agent (`local`: even when a server is configured) or
 * the configured server, with a stored OAuth login whose access token has expired refreshed first.
 */
async function connectionOf(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  file: FileConfig,
  local: boolean,
): Promise<Connection> {
  const credFile = credentialsPath(env);
  const logins = loadCredentials(credFile);
  const conn = local
    ? resolveConnection(
        { local: true, ...(flags.dataDir ? { dataDir: flags.dataDir } : {}), verbose: flags.verbose === true },
        env,
        file,
        logins,
      )
    : resolveConnection(flags, env, file, logins);
  if (conn.kind === 'server' && conn.stored !== undefined)
    return { ...conn, token: await refreshIfExpired(credFile, logins, conn.stored) };
  return conn;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE } from './paths.ts';
import { CALL_TRACE_ENV } from '../../src/presentation/cli/declared-client.ts';

/** The built CLI: the bundle the package's `agents` runs. */
export const BIN = BUNDLE;

/**
 * Where the end-to-end suites record which methods each command they ran called (one file per
 * test process); `npm test` resets it first and checks it against COMMAND_METHODS last
 * (test/support/cli-trace-check.ts).
 */
export const CLI_TRACE_DIR = fileURLToPath(new URL('../../dist/cli-trace', import.meta.url));

/**
 * The environment of a CLI run in the tests: isolated state (`dataDir`) and config (`configHome`),
 * nothing inherited that would change the mode or the output; `extra` comes last.
 */
export function cliEnv(dataDir: string, configHome: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  mkdirSync(CLI_TRACE_DIR, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CLEVERAGENTS_DATA_DIR: dataDir,
    XDG_CONFIG_HOME: configHome,
    NO_COLOR: '1',
    [CALL_TRACE_ENV]: join(CLI_TRACE_DIR, `${process.pid}.tsv`),
  };
  for (const k of [
    'CLEVERAGENTS_SERVER_URL',
    'CLEVERAGENTS_SERVER_TOKEN',
    'CLEVERAGENTS_FORMAT',
    'CLEVERAGENTS_CONFINEMENT',
    'FORCE_COLOR',
  ])
    delete env[k];
  return { ...env, ...extra };
}

let ownTraces = 0;

/**
 * A call trace of one run's own, in CLI_TRACE_DIR (so the coverage check reads it too): `env`
 * points the run at it; `called` says whether the command has sent that request yet — the event
 * to wait for when a command prints nothing until it ends.
 */
export function ownCallTrace(): { env: NodeJS.ProcessEnv; called(command: string, method: string): boolean } {
  mkdirSync(CLI_TRACE_DIR, { recursive: true });
  const file = join(CLI_TRACE_DIR, `${process.pid}-own-${++ownTraces}.tsv`);
  return {
    env: { [CALL_TRACE_ENV]: file },
    called: (command, method) =>
      existsSync(file) && readFileSync(file, 'utf8').split('\n').includes(`${command}\t${method}`),
  };
}

/** What a finished `agents …` process left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Collects a spawned CLI process's output until it exits; kills it and fails after `timeoutMs`.
 * `onStdout` sees the output so far after each chunk (to wait for a line while it runs).
 */
export function collect(
  child: ChildProcess,
  opts: { timeoutMs: number; onStdout?: (all: string) => void; onStderr?: (all: string) => void },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      opts.onStdout?.(stdout);
    });
    child.stderr?.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      opts.onStderr?.(stderr);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`timed out: agents ${child.spawnargs.slice(2).join(' ')}\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, opts.timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The JSON envelope of a command run with `--format json`. */
export interface CliEnvelope {
  exitCode: number;
  data: any;
}

/** How one `agents …` run is made; every field is optional. */
export interface RunOptions {
  /** Written to stdin, which is then closed ('' by default: a run never waits on a terminal). */
  input?: string;
  cwd?: string;
  /** Added to the CLI's environment for this run only. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** The exit code the run must end with (asserted, with the output in the message). */
  code?: number;
  /** Sees stdout so far after each chunk, and the process (to answer or signal it mid-run). */
  onStdout?: (all: string, child: ChildProcess) => void;
  /** Sees stderr so far after each chunk, and the process. */
  onStderr?: (all: string, child: ChildProcess) => void;
}

/** The built CLI as one user runs it: their own data and config directories and environment. */
export interface Agents {
  readonly dataDir: string;
  readonly configHome: string;
  /** Spawns `agents …` without waiting (for a test that drives the process itself). */
  spawn(args: string[], opts?: Pick<RunOptions, 'cwd' | 'env'> & { detached?: boolean }): ChildProcess;
  run(args: string[], opts?: RunOptions): Promise<CliResult>;
  /**
   * `--format json`: the envelope (throws when stdout is not one). With `code`, the envelope's
   * exit code is asserted too.
   */
  json(args: string[], opts?: RunOptions): Promise<CliEnvelope>;
  /** `--format json`, asserted to exit 0: the envelope's data. */
  ok(args: string[], opts?: RunOptions): Promise<any>;
}

export interface AgentsOptions {
  dataDir: string;
  /** XDG_CONFIG_HOME: where a login is stored; a directory of its own by default. */
  configHome?: string;
  /** Added to every run's environment. */
  env?: NodeJS.ProcessEnv;
  /** Arguments put before every command, read at each run (`--server <url>` once a server is up). */
  prefix?: () => string[];
  cwd?: string;
  /** 30 s by default. */
  timeoutMs?: number;
  /** Sees every finished run's output (to log a person's conversation in a team test). */
  onOutput?: (stdout: string, stderr: string) => void;
}

const described = (args: string[], r: CliResult): string =>
  `agents ${args.join(' ')} (exit ${r.code}):\n${r.stdout}\nstderr: ${r.stderr}`;

/** The CLI for one user; see {@link Agents}. */
export function agentsCli(o: AgentsOptions): Agents {
  const configHome = o.configHome ?? `${o.dataDir}-config`;
  const spawnAgents: Agents['spawn'] = (args, opts = {}) =>
    spawn(process.execPath, [BIN, ...(o.prefix?.() ?? []), ...args], {
      env: cliEnv(o.dataDir, configHome, { ...o.env, ...opts.env }),
      cwd: opts.cwd ?? o.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(opts.detached ? { detached: true } : {}),
    });
  const run: Agents['run'] = async (args, opts = {}) => {
    const child = spawnAgents(args, opts);
    const { onStdout, onStderr } = opts;
    const result = collect(child, {
      timeoutMs: opts.timeoutMs ?? o.timeoutMs ?? 30_000,
      ...(onStdout ? { onStdout: (all: string) => onStdout(all, child) } : {}),
      ...(onStderr ? { onStderr: (all: string) => onStderr(all, child) } : {}),
    });
    child.stdin?.end(opts.input ?? '');
    const done = await result;
    o.onOutput?.(done.stdout, done.stderr);
    if (opts.code !== undefined) assert.equal(done.code, opts.code, described(args, done));
    return done;
  };
  const json: Agents['json'] = async (args, opts = {}) => {
    const r = await run(['--format', 'json', ...args], opts);
    const what = described(args, r);
    let envelope: CliEnvelope;
    try {
      envelope = JSON.parse(r.stdout) as CliEnvelope;
    } catch {
      throw new Error(`not one JSON envelope: ${what}`);
    }
    if (opts.code !== undefined) assert.equal(envelope.exitCode, opts.code, what);
    return envelope;
  };
  return {
    dataDir: o.dataDir,
    configHome,
    spawn: spawnAgents,
    run,
    json,
    ok: async (args, opts = {}) => (await json(args, { ...opts, code: 0 })).data,
  };
}

/** The CLI as one person of a team test: their own data and config directories (their stored login). */
export interface CliPerson {
  run(args: string[], input?: string): Promise<CliResult>;
  /** `--format json`: the envelope (throws when stdout is not one). */
  json(args: string[], input?: string): Promise<CliEnvelope>;
  /** `--format json`, asserted to exit 0: the envelope's data. */
  ok(args: string[], input?: string): Promise<any>;
}

export function cliPerson(
  root: string,
  who: string,
  opts: { env?: NodeJS.ProcessEnv; onOutput?: (stdout: string, stderr: string) => void } = {},
): CliPerson {
  const cli = agentsCli({
    dataDir: join(root, `${who}-data`),
    configHome: join(root, `${who}-config`),
    ...opts,
  });
  return {
    run: (args, input = '') => cli.run(args, { input }),
    json: (args, input = '') => cli.json(args, { input }),
    ok: (args, input = '') => cli.ok(args, { input }),
  };
}

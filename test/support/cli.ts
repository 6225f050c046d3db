import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
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
  const run = async (args: string[], input = ''): Promise<CliResult> => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: cliEnv(join(root, `${who}-data`), join(root, `${who}-config`), opts.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const r = collect(child, { timeoutMs: 30_000 });
    child.stdin?.end(input);
    const done = await r;
    opts.onOutput?.(done.stdout, done.stderr);
    return done;
  };
  const json = async (args: string[], input?: string): Promise<CliEnvelope> => {
    const r = await run(['--format', 'json', ...args], input);
    try {
      return JSON.parse(r.stdout) as CliEnvelope;
    } catch {
      throw new Error(`not one JSON envelope (exit ${r.code}):\n${r.stdout}\nstderr: ${r.stderr}`);
    }
  };
  const ok = async (args: string[], input?: string): Promise<unknown> => {
    const e = await json(args, input);
    assert.equal(e.exitCode, 0, `${who}: agents ${args.join(' ')}: ${JSON.stringify(e.data)}`);
    return e.data;
  };
  return { run, json, ok };
}

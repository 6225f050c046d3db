import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CALL_TRACE_ENV } from '../../src/presentation/cli/declared-client.js';

/** The built CLI: the bundle the package's `agents` runs. */
export const BIN = fileURLToPath(new URL('../../src/bundle/agents.js', import.meta.url));

/**
 * Where the end-to-end suites record which methods each command they ran called (one file per
 * test process); `npm test` resets it first and checks it against COMMAND_METHODS last
 * (test/support/cli-trace-check.ts).
 */
export const CLI_TRACE_DIR = fileURLToPath(new URL('../../cli-trace', import.meta.url));

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
  opts: { timeoutMs: number; onStdout?: (all: string) => void },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      opts.onStdout?.(stdout);
    });
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
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

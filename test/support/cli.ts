import type { ChildProcess } from 'node:child_process';

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

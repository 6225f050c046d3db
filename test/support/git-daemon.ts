/**
 * A git remote on loopback for the git-remote tests: `git daemon` serving the bare repositories
 * under a directory over git:// (push enabled), on 127.0.0.1 only. git's own server, so what a
 * test sees is what a real remote answers (a refused non-fast-forward, a missing branch).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { eventually } from './eventually.ts';
import { freePort } from './ports.ts';

export interface GitDaemon {
  port: number;
  /** The git:// URL of a repository under the served directory (`app.git`), as `host` names it. */
  url(repository: string, host?: string): string;
  close(): Promise<void>;
}

const accepts = (port: number): Promise<true | undefined> =>
  new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(undefined));
  });

/** Serves every repository under `base` (`--export-all`, receive-pack on) until `close`. */
export async function startGitDaemon(base: string): Promise<GitDaemon> {
  const port = await freePort();
  const daemon = spawn(
    'git',
    [
      'daemon',
      '--export-all',
      '--enable=receive-pack',
      `--base-path=${base}`,
      '--listen=127.0.0.1',
      `--port=${port}`,
      '--reuseaddr',
      base,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => daemon.once('exit', () => resolve()));
  await eventually(() => accepts(port), 10_000, 'git daemon');
  return {
    port,
    url: (repository, host = '127.0.0.1') => `git://${host}:${port}/${repository}`,
    async close() {
      if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill();
      await exited;
    },
  };
}

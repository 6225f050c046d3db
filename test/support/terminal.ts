/**
 * The tmux end-to-end tests (chat, init, TUI): their tmux server, and what they start in a
 * terminal — a shell script that sets the test's environment, runs the command, prints its exit
 * status (`EXIT:<code>`) and then waits, so the screen after the exit still shows it all.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { eventually } from './eventually.ts';

/** `v` quoted for sh. */
export const shellQuote = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

/**
 * Writes the script at `path`: `env` exported (the terminal's own TERM and TMUX left to tmux), then
 * `lines` (already quoted), then the exit status. Returns `path`.
 */
export function terminalScript(path: string, env: NodeJS.ProcessEnv, lines: readonly string[]): string {
  const exports = Object.entries(env)
    .filter(
      ([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !['TERM', 'TMUX', 'TMUX_PANE'].includes(k),
    )
    .map(([k, v]) => `export ${k}=${shellQuote(v ?? '')}`);
  writeFileSync(path, ['#!/bin/sh', ...exports, ...lines, 'echo "EXIT:$?"', 'exec sleep 600', ''].join('\n'));
  chmodSync(path, 0o755);
  return path;
}

/** A tmux server of the test's own (`-L socket`): commands, a pane's screen, and waiting for what it shows. */
export interface Tmux {
  (...args: string[]): string;
  /** What `pane` shows (`joined`: wrapped lines joined, with 200 lines of scrollback). */
  screen(pane: string): string;
  /** Waits until `pane` shows `re`; fails with what it shows. */
  see(pane: string, re: RegExp, ms?: number): Promise<string>;
}

export function tmuxOn(socket: string, opts: { joined: boolean }): Tmux {
  const tmux = ((...args: string[]): string =>
    execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' })) as Tmux;
  const capture = opts.joined ? ['-J', '-S', '-200'] : [];
  tmux.screen = (pane) => tmux('capture-pane', '-p', ...capture, '-t', pane);
  tmux.see = (pane, re, ms = 30_000) =>
    eventually(
      () => {
        const s = tmux.screen(pane);
        return Promise.resolve(re.test(s) ? s : undefined);
      },
      ms,
      String(re),
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the screen:\n${tmux.screen(pane)}`);
    });
  return tmux;
}

/**
 * What the tmux end-to-end tests (chat, init, TUI) start in a terminal: a shell script that sets
 * the test's environment, runs the command, prints its exit status (`EXIT:<code>`) and then waits,
 * so the screen after the exit still shows it all.
 */
import { chmodSync, writeFileSync } from 'node:fs';

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

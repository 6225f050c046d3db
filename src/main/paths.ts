import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Where state lives: `--data-dir`, else `CLEVERAGENTS_DATA_DIR`, else the XDG state directory
 * (`$XDG_STATE_HOME/cleveragents`, default `~/.local/state/cleveragents`).
 */
export function resolveDataDir(flag?: string): string {
  if (flag) return resolve(flag);
  const env = process.env['CLEVERAGENTS_DATA_DIR'];
  if (env) return resolve(env);
  const xdg = process.env['XDG_STATE_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'state'), 'cleveragents');
}

export const databaseFile = (dataDir: string): string => join(dataDir, 'cleveragents.db');
export const tokenFile = (dataDir: string): string => join(dataDir, 'server-token');
/** The key secrets are sealed with: CLEVERAGENTS_SECRET_KEY_FILE, else `secret.key` beside the database. */
export const secretKeyFile = (dataDir: string, env: NodeJS.ProcessEnv = process.env): string =>
  env['CLEVERAGENTS_SECRET_KEY_FILE'] ? resolve(env['CLEVERAGENTS_SECRET_KEY_FILE']) : join(dataDir, 'secret.key');

/** The CLI's configuration directory (`$XDG_CONFIG_HOME/cleveragents`, default `~/.config/cleveragents`). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_CONFIG_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(env['HOME'] || homedir(), '.config'), 'cleveragents');
}

/**
 * Server mode's workspace root (`--workspace-root`, CLEVERAGENTS_WORKSPACE_ROOT, else
 * `<data dir>/workspaces`): a namespace without the host-path capability names directories under
 * `<root>/<namespace>` only.
 */
export function workspaceRootOf(
  flag: string | undefined,
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const given = (flag ?? env['CLEVERAGENTS_WORKSPACE_ROOT'] ?? '').trim();
  return resolve(given === '' ? join(dataDir, 'workspaces') : given);
}

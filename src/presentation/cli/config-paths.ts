/** Where the CLI's own files are: apart from their readers, so that bin.ts can look without loading them. */
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** `$XDG_CONFIG_HOME/cleveragents/config.yaml`, else `~/.config/cleveragents/config.yaml`. */
export function configPath(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CONFIG_HOME'];
  const base = xdg && xdg.startsWith('/') ? xdg : join(env['HOME'] || homedir(), '.config');
  return join(base, 'cleveragents', 'config.yaml');
}

/** `$XDG_CONFIG_HOME/cleveragents/credentials.json` (next to config.yaml). */
export function credentialsPath(env: NodeJS.ProcessEnv): string {
  return join(dirname(configPath(env)), 'credentials.json');
}

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, type Target } from '../../clients/vscode/src/core/connection.ts';
import { BIN } from './cli.ts';

/**
 * A local-mode target for the extension's core: the built `agents` bin under this Node.js (as the
 * setting `cleveragents.agentPath` pointing at a bin script does), its own data directory.
 */
export function localTarget(dataDir: string, env: NodeJS.ProcessEnv = {}): Extract<Target, { mode: 'local' }> {
  const base: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(dataDir, 'config'), NO_COLOR: '1' };
  for (const k of [
    'CLEVERAGENTS_SERVER_URL',
    'CLEVERAGENTS_SERVER_TOKEN',
    'CLEVERAGENTS_DATA_DIR',
    'CLEVERAGENTS_CONFINEMENT',
  ])
    delete base[k];
  return { mode: 'local', agentPath: BIN, node: process.execPath, dataDir, env: { ...base, ...env } };
}

/** A connection and the agent log lines it reported. */
export function connect(target: Target): { conn: Connection; log: string[] } {
  const log: string[] = [];
  return { conn: new Connection(target, (l) => log.push(l)), log };
}

export const tempRoot = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));

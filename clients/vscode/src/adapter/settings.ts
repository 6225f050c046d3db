import { homedir } from 'node:os';
import * as vscode from 'vscode';
import type { Target } from '../core/connection.ts';

/** The SecretStorage key of the server token (never a setting: settings sync and show in plain text). */
export const TOKEN_KEY = 'cleveragents.serverToken';

const expand = (p: string): string => (p === '~' || p.startsWith('~/') ? `${homedir()}${p.slice(1)}` : p);

/** Where the agent is, from the settings and the stored token. */
export async function readTarget(secrets: vscode.SecretStorage): Promise<Target> {
  const cfg = vscode.workspace.getConfiguration('cleveragents');
  const namespace = cfg.get<string>('namespace', '').trim();
  const serverUrl = cfg.get<string>('serverUrl', '').trim();
  if (serverUrl !== '') {
    const token = await secrets.get(TOKEN_KEY);
    return { mode: 'remote', url: serverUrl, ...(token ? { token } : {}), ...(namespace ? { namespace } : {}) };
  }
  const dataDir = cfg.get<string>('dataDir', '').trim();
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return {
    mode: 'local',
    agentPath: expand(cfg.get<string>('agentPath', 'agents').trim()),
    ...(dataDir ? { dataDir: expand(dataDir) } : {}),
    ...(namespace ? { namespace } : {}),
    ...(cwd ? { cwd } : {}),
  };
}

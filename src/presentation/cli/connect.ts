import { A2AClient } from '../../protocol/client/index.js';
import type { Connection } from './config.js';

/**
 * The client for one command. Local mode spawns `agents serve --stdio` (the agent's log is kept
 * for error messages, or shown with --verbose); server mode talks HTTP. The caller closes it.
 * `agentBin`: the `agents` script the local agent runs (the CLI's own, so a bundled CLI spawns the bundle).
 */
export async function connect(
  conn: Connection,
  clientVersion: string,
  env: NodeJS.ProcessEnv,
  agentBin?: string,
): Promise<A2AClient> {
  if (conn.kind === 'server')
    return A2AClient.remote(conn.token ? { url: conn.url, token: conn.token } : { url: conn.url });
  const extraArgs: string[] = [];
  if (conn.dataDir) extraArgs.push('--data-dir', conn.dataDir);
  if (conn.verbose) extraArgs.push('--verbose');
  return A2AClient.local({
    ...(agentBin ? { bin: agentBin } : {}),
    extraArgs,
    env,
    stderr: conn.verbose ? 'inherit' : 'capture',
    clientInfo: { name: 'agents-cli', version: clientVersion },
  });
}

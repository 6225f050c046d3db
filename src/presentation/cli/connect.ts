import { A2AClient } from '../../protocol/client/index.ts';
import type { Connection } from './config.ts';
import type { EarlyAgent } from './early-agent.ts';

/**
 * The client for one command. Local mode spawns `agents serve --stdio` (the agent's log is kept
 * for error messages, or shown with --verbose); server mode talks HTTP. The caller closes it.
 * `agentBin`: the `agents` script the local agent runs (the CLI's own, so a bundled CLI spawns the bundle);
 * `early`: the local agent bin.ts spawned already, taken when it was spawned as this connection needs.
 */
export async function connect(
  conn: Connection,
  clientVersion: string,
  env: NodeJS.ProcessEnv,
  agentBin?: string,
  early?: EarlyAgent,
): Promise<A2AClient> {
  if (conn.kind === 'server')
    return A2AClient.remote(conn.token ? { url: conn.url, token: conn.token } : { url: conn.url });
  const extraArgs: string[] = [];
  if (conn.dataDir) extraArgs.push('--data-dir', conn.dataDir);
  if (conn.verbose) extraArgs.push('--verbose');
  const stderr = conn.verbose ? 'inherit' : 'capture';
  const spawned = early?.take(extraArgs, stderr, env);
  return A2AClient.local({
    ...(agentBin ? { bin: agentBin } : {}),
    ...(spawned ? { spawned } : {}),
    extraArgs,
    env,
    stderr,
    clientInfo: { name: 'agents-cli', version: clientVersion },
  });
}

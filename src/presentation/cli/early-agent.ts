/**
 * The local agent, spawned by bin.ts before the CLI loads its commands: the agent's start-up and
 * the CLI's then share the two cores instead of following each other. It is spawned with
 * `--await-client`: it serves nothing and reports no failure until the client writes to it. In a
 * data directory that exists it opens the database and builds its services meanwhile; it creates
 * none (main/serve.ts). A command that does not use it (server mode, a usage error, a command
 * without an agent) ends it at no cost but the CPU. The guess below is cheap and errs
 * towards not spawning: the CLI adopts the agent only when the command asks for one with exactly
 * these arguments, and otherwise spawns its own as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AGENT_NODE_ARGS, AGENT_OWN_GROUP, agentEnv } from '../../protocol/client/agent-env.ts';
import { configPath, credentialsPath } from './config-paths.ts';

/** What `agents serve --stdio` would be spawned with, and the agent spawned so. */
export interface EarlyAgent {
  /** The agent, if it was spawned with `extraArgs` and `stderr` and still runs; only once. */
  take(extraArgs: readonly string[], stderr: 'inherit' | 'capture', env: NodeJS.ProcessEnv): ChildProcess | undefined;
  /** Ends the agent unless it was taken. */
  dispose(): void;
}

/** Commands that never talk to a local agent (or read their flags otherwise). */
const NO_AGENT = new Set(['serve', 'login', 'logout', 'help']);
const NO_AGENT_FLAGS = new Set(['--help', '-h', '--version', '-V', '--server']);
/** `agents server …` commands that open the server's database themselves: an agent would hold it too. */
const NO_AGENT_SERVER = new Set(['migrate', 'backup', 'restore']);

/**
 * Spawns the local agent `args` (the CLI's arguments) will most likely ask for, or nothing when
 * they may well not: server mode in the flags, the environment, the config file or a login.
 */
export function spawnEarlyAgent(args: readonly string[], env: NodeJS.ProcessEnv, bin: string): EarlyAgent | undefined {
  const first = args[0];
  if (first === undefined || first.startsWith('-') || NO_AGENT.has(first)) return undefined;
  if (first === 'server' && args.some((a) => NO_AGENT_SERVER.has(a))) return undefined;
  let dataDir: string | undefined;
  let verbose = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--') break;
    if (NO_AGENT_FLAGS.has(a) || a.startsWith('--server=')) return undefined;
    if (a === '--verbose') verbose = true;
    else if (a === '--data-dir') dataDir = args[++i];
    else if (a.startsWith('--data-dir=')) dataDir = a.slice('--data-dir='.length);
  }
  if (env['CLEVERAGENTS_SERVER_URL'] || existsSync(credentialsPath(env)) || configNamesServer(env)) return undefined;
  const extraArgs = [...(dataDir ? ['--data-dir', resolve(dataDir)] : []), ...(verbose ? ['--verbose'] : [])];
  const stderr = verbose ? 'inherit' : 'capture';
  const child = spawn(process.execPath, [...AGENT_NODE_ARGS, bin, 'serve', '--stdio', '--await-client', ...extraArgs], {
    stdio: ['pipe', 'pipe', stderr === 'capture' ? 'pipe' : stderr],
    env: agentEnv(env),
    // Out of the terminal's reach: Ctrl-C is the CLI's to handle (see AGENT_OWN_GROUP).
    detached: AGENT_OWN_GROUP,
  });
  let alive = true;
  child.on('exit', () => (alive = false));
  // Seen by whoever takes it; an agent nobody took is simply not used.
  child.on('error', () => (alive = false));
  child.stdin?.on('error', () => {});
  let taken = false;
  return {
    take(want, wantStderr, wantEnv) {
      if (taken || !alive || wantStderr !== stderr || wantEnv !== env) return undefined;
      if (want.length !== extraArgs.length || want.some((a, i) => a !== extraArgs[i])) return undefined;
      taken = true;
      return child;
    },
    dispose() {
      if (taken || !alive) return;
      taken = true;
      child.kill('SIGTERM');
    },
  };
}

/** Whether the config file sets `server` (read as text: the YAML parser is not loaded yet). */
function configNamesServer(env: NodeJS.ProcessEnv): boolean {
  try {
    return /^\s*["']?server["']?\s*:/m.test(readFileSync(configPath(env), 'utf8'));
  } catch {
    return false;
  }
}

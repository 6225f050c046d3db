/** How the agent confines the programs it runs, from its options and the environment (read once, at start). */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { maskedPaths, readOnlyPathProblem, type ConfinementSettings } from '../infrastructure/index.ts';
import { envInt } from './limits-config.ts';
import { configDir, tokenFile } from './paths.ts';
import { StartupError } from './startup-errors.ts';

/** What the settings are made from (the composition root's options). */
export interface ConfinementOptions {
  confinement?:
    { mode?: 'bubblewrap' | 'none'; bwrapPath?: string; readOnlyPaths?: readonly string[] | undefined } | undefined;
  dataDir: string;
  tokenFile?: string | undefined;
  /** The key that seals namespaces' secrets: never visible to a command. */
  secretKeyFile: string;
}

/**
 * How every command for an actor or a plan runs: inside bubblewrap (probed once, here), or — only
 * when the user says so with CLEVERAGENTS_CONFINEMENT=none — unconfined. CLEVERAGENTS_BWRAP names
 * the program; the CLEVERAGENTS_COMMAND_* variables set the limits; `--read-only-path` and
 * CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS (colon-separated: it also reaches the local agent the
 * CLI spawns, which has no flags of its own) name the toolchains commands see read-only.
 */
export function confinementSettings(opts: ConfinementOptions): ConfinementSettings {
  const setting = opts.confinement?.mode ?? (process.env['CLEVERAGENTS_CONFINEMENT']?.trim() || 'bubblewrap');
  if (setting !== 'bubblewrap' && setting !== 'none')
    throw new StartupError(
      `CLEVERAGENTS_CONFINEMENT must be bubblewrap or none (got ${JSON.stringify(setting.slice(0, 40))})`,
      'unset it (commands run in bubblewrap), or set it to none to run commands unconfined',
    );
  const mib = (name: string): number | undefined => {
    const n = envInt(name, 1, 1024 * 1024);
    return n === undefined ? undefined : n * 1024 * 1024;
  };
  const limits = {
    memoryBytes: mib('CLEVERAGENTS_COMMAND_MEMORY_MB'),
    maxProcesses: envInt('CLEVERAGENTS_COMMAND_MAX_PROCESSES', 0, 1_000_000),
    maxOutputBytes: mib('CLEVERAGENTS_COMMAND_MAX_OUTPUT_MB'),
  };
  const home = homedir();
  const secrets = [
    configDir(),
    opts.dataDir,
    tokenFile(opts.dataDir),
    opts.secretKeyFile,
    ...(opts.tokenFile ? [opts.tokenFile] : []),
  ];
  return {
    mode: setting,
    bwrapPath: opts.confinement?.bwrapPath ?? (process.env['CLEVERAGENTS_BWRAP'] || undefined),
    home,
    secrets,
    limits: Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
    readOnlyPaths: readOnlyPaths(opts.confinement?.readOnlyPaths ?? [], maskedPaths(home, secrets)),
  };
}

/** `--read-only-path` flags and CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS, each checked (a bad one stops the start). */
function readOnlyPaths(flags: readonly string[], hidden: readonly string[]): string[] {
  const env = 'CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS';
  const given: [string, string][] = [
    ...flags.map((p): [string, string] => [p, '--read-only-path']),
    ...(process.env[env] ?? '')
      .split(':')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p): [string, string] => [p, env]),
  ];
  for (const [p, source] of given) {
    const problem = readOnlyPathProblem(p, hidden);
    if (problem)
      throw new StartupError(
        `the read-only path ${JSON.stringify(p.slice(0, 200))} (${source}) ${problem}`,
        problem.startsWith('is inside')
          ? 'name a toolchain directory outside the data and config directories and the secrets of the home (~/.ssh, ~/.aws, …); they stay hidden from commands'
          : `name an existing directory by its absolute path, e.g. --read-only-path /opt/go (or ${env}=/opt/go:/opt/jdk); see agents serve --help`,
      );
  }
  return [...new Set(given.map(([p]) => resolve(p)))];
}

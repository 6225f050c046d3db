// What confining a command takes and gives: settings, limits, one invocation, the prepared spawn.

export type NetworkAccess = 'none' | 'allow';
export type ConfinementMode = 'bubblewrap' | 'none' | 'unavailable';

export interface CommandLimits {
  /** Address space of each process (RLIMIT_AS), in bytes. */
  memoryBytes: number;
  /** Processes (and threads) alive at once in one command, where a pids cgroup can enforce it (0: no limit). */
  maxProcesses: number;
  /** Output (stdout + stderr) a command may produce before it is killed. */
  maxOutputBytes: number;
}

export const DEFAULT_COMMAND_LIMITS: Readonly<CommandLimits> = {
  memoryBytes: 4 * 1024 ** 3,
  maxProcesses: 512,
  maxOutputBytes: 16 * 1024 * 1024,
};

/** The Debian package, named in every refusal. */
export const INSTALL_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or set CLEVERAGENTS_CONFINEMENT=none to run commands unconfined (recorded and shown on every plan)';

export interface ConfinementSettings {
  /** `none` only when the user asked for it (CLEVERAGENTS_CONFINEMENT=none). */
  mode: 'bubblewrap' | 'none';
  /** Default: `bwrap` on PATH. */
  bwrapPath?: string | undefined;
  /** The home directory whose secrets are masked. */
  home: string;
  /** More paths to mask: the CleverAgents config and state directories, the server token file. */
  secrets: readonly string[];
  limits?: Partial<CommandLimits>;
  /** A cgroup v1 pids hierarchy to bound process counts in (default /sys/fs/cgroup/pids); null: none. */
  pidsCgroup?: string | null;
  /** Where the allowlisted variables come from (default process.env). */
  serverEnv?: NodeJS.ProcessEnv;
  /**
   * Toolchains outside the system directories, shown read-only (`confinement.readOnlyPaths`:
   * `agents serve --read-only-path`, CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS). Absolute existing
   * directories, checked by whoever configured them (`readOnlyPathProblem`).
   */
  readOnlyPaths?: readonly string[] | undefined;
  /**
   * The installation of the runtime running the agent, shown read-only so that a command finds
   * `node` (default: `nodeInstallation` of process.execPath, when outside the system dirs; [] for none).
   */
  runtimeDirs?: readonly string[] | undefined;
}

/** One command to run. */
export interface CommandInvocation {
  program: string;
  args: readonly string[];
  cwd: string;
  /** The only directory the command may write (besides its private /tmp). */
  sandboxRoot: string;
  network: NetworkAccess;
  /** Variables the action declares, added to the allowlisted ones. */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * More directories the command may write, mounted after the sandbox (the agent's own git in a
   * sandbox writes the repository's git directory: objects, the plan branch, the worktree's index).
   * The sandbox's git metadata is then not made read-only.
   */
  writable?: readonly string[] | undefined;
}

/** What to spawn, and what to do after it exited. */
export interface PreparedCommand {
  program: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Frees what `prepare` took (the cgroup) and says which limits the command hit. */
  release(): Promise<{ processLimitHit: boolean }>;
}

/** Refused: bubblewrap is missing or the kernel will not run it. */
export class ConfinementUnavailableError extends Error {
  readonly reason: string;

  constructor(reason: string) {
    super(
      `commands are refused: they must run confined, but bubblewrap cannot be used here (${reason}); ${INSTALL_HINT}`,
    );
    this.reason = reason;
    this.name = 'ConfinementUnavailableError';
  }
}

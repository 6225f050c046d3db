/**
 * How commands run for an actor or a plan are confined (issues #16, #35): inside bubblewrap, seeing
 * a minimal file system (the system's programs and libraries, a curated /etc and the configured
 * toolchains read-only, the sandbox writable, a private /tmp and HOME — see confinement-view.ts),
 * with secrets under anything shown masked, no network unless allowed, their own PID/IPC/UTS
 * namespaces, limits on memory and process count, and an environment built from an allowlist —
 * never the server's own environment.
 *
 * `CommandConfinement.probe` decides once, at start-up, whether bubblewrap works here and what a
 * command sees; `prepare` turns one command into the argv and environment that run it.
 */
import { execFile } from 'node:child_process';
import { access, constants, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  buildSystemView,
  describeView,
  gitBinds,
  isUnderAny,
  maskedPaths,
  nodeInstallation,
  readOnlyPathProblem,
  type SystemView,
} from './confinement-view.ts';
import { createPidsCgroup, pidsCgroupRoot, releaseCgroup } from './pids-cgroup.ts';

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

/** The server's variables a command may see (by exact name, or `LC_*`). */
const ENV_ALLOWLIST = new Set(['PATH', 'LANG', 'LANGUAGE', 'TERM', 'TZ']);
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** HOME inside the sandbox: an empty directory in its private /tmp. */
const SANDBOX_HOME = '/tmp/home';

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

/**
 * How commands are confined, or the probe that will say ({@link CommandConfinement.start}): its
 * users await it where a command is confined or its mode reported, so the probe (`bwrap … true`,
 * 40–90 ms) runs beside the start instead of before the first answer.
 */
export type ConfinementSource = CommandConfinement | Promise<CommandConfinement>;

export class CommandConfinement {
  readonly limits: CommandLimits;

  readonly mode: ConfinementMode;
  private readonly settings: ConfinementSettings;
  private readonly tools: { bwrap: string; pids?: string | undefined; view?: SystemView | undefined };
  /** Why bubblewrap cannot be used (mode `unavailable`). */
  readonly reason?: string | undefined;

  private constructor(
    mode: ConfinementMode,
    settings: ConfinementSettings,
    tools: { bwrap: string; pids?: string | undefined; view?: SystemView | undefined },
    reason?: string,
  ) {
    this.mode = mode;
    this.settings = settings;
    this.tools = tools;
    this.reason = reason;
    this.limits = { ...DEFAULT_COMMAND_LIMITS, ...settings.limits };
  }

  /** Commands run as plain child processes (tests of the runner itself; `confinement: none`). */
  static unconfined(settings: Partial<ConfinementSettings> = {}): CommandConfinement {
    return new CommandConfinement('none', { home: '/', secrets: [], ...settings, mode: 'none' }, { bwrap: 'bwrap' });
  }

  /**
   * Decides, once, how commands will run: for `bubblewrap`, builds the view a command gets and runs
   * `bwrap … true` in it with the namespaces every command gets; a missing program or a kernel
   * that refuses gives mode `unavailable`.
   */
  static async probe(settings: ConfinementSettings): Promise<CommandConfinement> {
    const searchPath = settings.serverEnv?.['PATH'] ?? process.env['PATH'] ?? DEFAULT_PATH;
    const named = settings.bwrapPath ?? 'bwrap';
    if (settings.mode === 'none') return new CommandConfinement('none', settings, { bwrap: named });
    // Resolved once: commands are spawned with an empty environment, so no PATH lookup later.
    const bwrap = named.includes('/') ? named : ((await which(named, searchPath)) ?? named);
    // The runtime's own installation, unless it sits inside something masked.
    const hidden = maskedPaths(settings.home, settings.secrets);
    const runtimeDirs =
      settings.runtimeDirs ??
      (await nodeInstallation({ execPath: process.execPath, searchPath, home: settings.home })).filter(
        (d) => readOnlyPathProblem(d, hidden) === undefined,
      );
    const view = await buildSystemView({ readOnlyPaths: settings.readOnlyPaths ?? [], runtimeDirs });
    const probe = await run(bwrap, [
      ...['--tmpfs', '/tmp', ...view.args, '--proc', '/proc', '--dev', '/dev', '--remount-ro', '/'],
      ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent', '--new-session'],
      ...['--clearenv', 'true'],
    ]);
    if (!probe.ok) return new CommandConfinement('unavailable', settings, { bwrap }, probe.error);
    // maxProcesses 0 turns the process-count limit off (the pids cgroup costs ~15 ms a command).
    const wantPids = (settings.limits?.maxProcesses ?? DEFAULT_COMMAND_LIMITS.maxProcesses) > 0;
    const pids = wantPids
      ? await pidsCgroupRoot(settings.pidsCgroup === undefined ? '/sys/fs/cgroup/pids' : settings.pidsCgroup)
      : undefined;
    return new CommandConfinement('bubblewrap', settings, { bwrap, pids, view });
  }

  /**
   * {@link probe}, started now for users to await: a probe that throws leaves mode `unavailable`
   * with its reason (every command is refused saying why), never a rejection nobody awaits.
   */
  static start(settings: ConfinementSettings): Promise<CommandConfinement> {
    return CommandConfinement.probe(settings).catch(
      (err: unknown) =>
        new CommandConfinement(
          'unavailable',
          settings,
          { bwrap: settings.bwrapPath ?? 'bwrap' },
          `the confinement probe failed: ${err instanceof Error ? err.message : String(err)}`,
        ),
    );
  }

  /** Whether a process-count limit is enforced (a writable pids cgroup was found). */
  get boundsProcesses(): boolean {
    return this.tools.pids !== undefined;
  }

  /** What a confined command sees of the host (mode `bubblewrap` only). */
  get view(): SystemView | undefined {
    return this.tools.view;
  }

  /** One line for logs and diagnostics. */
  describe(): string {
    if (this.mode === 'none') return 'none: commands run unconfined (CLEVERAGENTS_CONFINEMENT=none)';
    if (this.mode === 'unavailable') return `unavailable: ${this.reason ?? 'bubblewrap cannot be used'}`;
    return `bubblewrap (${this.tools.bwrap}); process limit ${this.boundsProcesses ? 'by a pids cgroup' : 'not enforced (no writable pids cgroup)'}`;
  }

  /**
   * How commands will run, as a diagnostics check (and what a command sees): unusable bubblewrap
   * fails, running unconfined warns.
   */
  check(): { status: 'ok' | 'warn' | 'fail'; detail: string; hint?: string } {
    if (this.mode === 'unavailable')
      return { status: 'fail', detail: `commands are refused: ${this.describe()}`, hint: INSTALL_HINT };
    if (this.mode === 'none')
      return { status: 'warn', detail: this.describe(), hint: 'unset CLEVERAGENTS_CONFINEMENT to confine commands' };
    const sees = this.tools.view ? `. ${describeView(this.tools.view)}` : '';
    if (!this.boundsProcesses)
      return {
        status: 'warn',
        detail: `${this.describe()}: a runaway fork is stopped only by the time limit${sees}`,
        hint: 'run where /sys/fs/cgroup/pids is writable (cgroup v1) to bound process counts',
      };
    return { status: 'ok', detail: `${this.describe()}${sees}` };
  }

  /** The environment of a command: the allowlist, HOME, what the action declares. */
  environment(inv: Pick<CommandInvocation, 'env'>): Record<string, string> {
    const server = this.settings.serverEnv ?? process.env;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(server))
      if (v !== undefined && (ENV_ALLOWLIST.has(k) || k.startsWith('LC_'))) env[k] = v;
    env['PATH'] ??= DEFAULT_PATH;
    env['HOME'] = this.mode === 'bubblewrap' ? SANDBOX_HOME : this.settings.home;
    env['TMPDIR'] = '/tmp';
    env['GIT_TERMINAL_PROMPT'] = '0';
    return { ...env, ...inv.env };
  }

  /**
   * The program a command would run, found as execvp would find it — inside the sandbox's view when
   * confined (a program on the server's PATH that the command cannot see does not count) — or
   * undefined when there is none.
   */
  async locate(
    inv: Pick<CommandInvocation, 'program' | 'cwd' | 'env' | 'sandboxRoot' | 'writable'>,
  ): Promise<string | undefined> {
    const env = this.environment(inv);
    const view = this.mode === 'bubblewrap' ? this.tools.view : undefined;
    if (!view) return resolveProgram(inv.program, inv.cwd, env, () => true);
    const rw = [inv.sandboxRoot, ...(inv.writable ?? [])];
    const roots = [...view.roots, ...rw, ...(await Promise.all(rw.map((p) => realpath(p).catch(() => p))))];
    return resolveProgram(inv.program, inv.cwd, env, (p) => isUnderAny(p, roots));
  }

  async prepare(inv: CommandInvocation): Promise<PreparedCommand> {
    const env = this.environment(inv);
    if (this.mode === 'unavailable') throw new ConfinementUnavailableError(this.reason ?? 'unknown');
    if (this.mode === 'none')
      return {
        program: inv.program,
        args: [...inv.args],
        env,
        cwd: inv.cwd,
        release: () => Promise.resolve({ processLimitHit: false }),
      };
    const argv = [...(await this.bwrapArgs(inv, env)), '--', inv.program, ...inv.args];
    const cgroup = this.tools.pids ? await createPidsCgroup(this.tools.pids, this.limits.maxProcesses) : undefined;
    // A shell sets RLIMIT_AS (inherited through bwrap by everything the command starts), joins the
    // pids cgroup (so every fork is counted), then becomes bwrap: one exec fewer than prlimit inside.
    const kib = Math.floor(this.limits.memoryBytes / 1024);
    const join = cgroup ? 'echo $$ > "$1" || exit 125; ' : '';
    return {
      program: '/bin/sh',
      args: [
        '-c',
        `ulimit -v ${kib} || exit 125; ${join}shift; exec "$@"`,
        'sh',
        cgroup ? path.join(cgroup, 'cgroup.procs') : '-',
        this.tools.bwrap,
        ...argv,
      ],
      env: {},
      cwd: inv.cwd,
      release: () => (cgroup ? releaseCgroup(cgroup) : Promise.resolve({ processLimitHit: false })),
    };
  }

  /**
   * bwrap's options for one command (`env`: its environment); later mounts go on top of earlier
   * ones: the private /tmp, the system view (a toolchain under /tmp shows on top of it), the
   * secrets under what it shows masked, the sandbox, its git metadata read-only (or the extra
   * writable dirs), the secrets inside those masked, and last the root itself made read-only
   * (nothing can be created beside the mounts).
   */
  private async bwrapArgs(inv: CommandInvocation, env: Record<string, string>): Promise<string[]> {
    const view = this.tools.view;
    if (!view) throw new ConfinementUnavailableError('the view of the file system was not built');
    const a = ['--tmpfs', '/tmp', '--dir', SANDBOX_HOME, ...view.args, '--proc', '/proc', '--dev', '/dev'];
    const secrets = await this.secretPaths();
    // Masked before the sandbox is bound: a secret may hold it (the data directory holds every sandbox).
    a.push(...(await masks(secrets.filter((p) => isUnderAny(p, view.roots)))));
    const root = inv.sandboxRoot;
    a.push('--bind', root, root);
    const rw = [root];
    if (inv.writable && inv.writable.length > 0) {
      for (const p of inv.writable) a.push('--bind', p, p);
      rw.push(...inv.writable);
    } else {
      // The sandbox's git metadata stays read-only: a command that rewrote `.git` (or, in a worktree,
      // its HEAD) could make the server's next checkpoint commit into the user's own branches.
      a.push(...(await gitBinds(root)));
    }
    // A chat's work directory is the user's own directory: a home registered as a resource keeps its secrets.
    const rwReal = await Promise.all(rw.map((p) => realpath(p).catch(() => p)));
    a.push(...(await masks(secrets.filter((p) => rwReal.some((d) => p !== d && isUnderAny(p, [d]))))));
    a.push('--remount-ro', '/');
    a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts');
    if (inv.network !== 'allow') a.push('--unshare-net');
    a.push('--die-with-parent', '--new-session', '--chdir', inv.cwd, '--clearenv');
    for (const [k, v] of Object.entries(env)) a.push('--setenv', k, v);
    return a;
  }

  /**
   * The existing secrets (real paths). Only those under something the command sees get a mask:
   * the rest is not in the view at all, and a mask there would only create the path.
   */
  private async secretPaths(): Promise<string[]> {
    const wanted = maskedPaths(this.settings.home, this.settings.secrets);
    const out = new Set<string>();
    for (const p of wanted) {
      const real = await realpath(p).catch(() => undefined);
      if (real && real !== '/') out.add(real);
    }
    return [...out].sort();
  }
}

/** An empty read-only directory, or an empty file, over each path. */
async function masks(paths: readonly string[]): Promise<string[]> {
  const a: string[] = [];
  for (const p of paths) {
    const st = await stat(p).catch(() => undefined);
    if (st?.isDirectory()) a.push('--tmpfs', p, '--remount-ro', p);
    else if (st) a.push('--ro-bind', '/dev/null', p);
  }
  return a;
}

async function which(program: string, searchPath: string): Promise<string | undefined> {
  for (const dir of searchPath.split(':')) {
    if (!dir.startsWith('/')) continue;
    const p = path.join(dir, program);
    if (
      await access(p, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return p;
  }
  return undefined;
}

/**
 * Resolves a program as execvp would, among the paths `seen` says exist where it runs (the path
 * and, through symlinks, what it points to).
 */
async function resolveProgram(
  program: string,
  cwd: string,
  env: Record<string, string>,
  seen: (p: string) => boolean,
): Promise<string | undefined> {
  const executable = async (p: string): Promise<boolean> =>
    seen(p) &&
    (await access(p, constants.X_OK).then(
      () => true,
      () => false,
    )) &&
    seen(await realpath(p));
  if (program.includes('/')) {
    const p = path.resolve(cwd, program);
    return (await executable(p)) ? p : undefined;
  }
  for (const dir of (env['PATH'] ?? DEFAULT_PATH).split(':')) {
    if (!dir.startsWith('/')) continue;
    const p = path.join(dir, program);
    if (await executable(p)) return p;
  }
  return undefined;
}

function run(program: string, args: string[]): Promise<{ ok: true } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    execFile(program, args, { timeout: 10_000, env: {} }, (err, _stdout, stderr) => {
      if (!err) return resolve({ ok: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return resolve({ ok: false, error: `${program} is not installed` });
      const said = String(stderr).trim().split('\n')[0];
      resolve({ ok: false, error: `the kernel refused it: ${said || err.message}` });
    });
  });
}

/**
 * How commands run for an actor or a plan are confined (issue #16): inside bubblewrap, with the
 * filesystem read-only except the sandbox, the user's secrets masked, a private /tmp and HOME, no
 * network unless allowed, their own PID/IPC/UTS namespaces, limits on memory and process count, and
 * an environment built from an allowlist — never the server's own environment.
 *
 * `CommandConfinement.probe` decides once, at start-up, whether bubblewrap works here; `prepare`
 * turns one command into the argv and environment that run it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, constants, lstat, mkdir, readFile, realpath, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

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

/** Files and directories under the home directory that hold credentials. */
const HOME_SECRETS = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.netrc',
  '.git-credentials',
  '.docker',
  '.kube',
  '.npmrc',
  '.pypirc',
  '.azure',
  '.config/gh',
  '.config/gcloud',
];

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
  constructor(readonly reason: string) {
    super(
      `commands are refused: they must run confined, but bubblewrap cannot be used here (${reason}); ${INSTALL_HINT}`,
    );
    this.name = 'ConfinementUnavailableError';
  }
}

export class CommandConfinement {
  readonly limits: CommandLimits;

  private constructor(
    readonly mode: ConfinementMode,
    private readonly settings: ConfinementSettings,
    private readonly tools: { bwrap: string; pids?: string | undefined },
    /** Why bubblewrap cannot be used (mode `unavailable`). */
    readonly reason?: string,
  ) {
    this.limits = { ...DEFAULT_COMMAND_LIMITS, ...settings.limits };
  }

  /** Commands run as plain child processes (tests of the runner itself; `confinement: none`). */
  static unconfined(settings: Partial<ConfinementSettings> = {}): CommandConfinement {
    return new CommandConfinement('none', { home: '/', secrets: [], ...settings, mode: 'none' }, { bwrap: 'bwrap' });
  }

  /**
   * Decides, once, how commands will run: for `bubblewrap`, runs `bwrap … true` with the namespaces
   * every command gets; a missing program or a kernel that refuses gives mode `unavailable`.
   */
  static async probe(settings: ConfinementSettings): Promise<CommandConfinement> {
    const searchPath = settings.serverEnv?.['PATH'] ?? process.env['PATH'] ?? DEFAULT_PATH;
    const named = settings.bwrapPath ?? 'bwrap';
    if (settings.mode === 'none') return new CommandConfinement('none', settings, { bwrap: named });
    // Resolved once: commands are spawned with an empty environment, so no PATH lookup later.
    const bwrap = named.includes('/') ? named : ((await which(named, searchPath)) ?? named);
    const probe = await run(bwrap, [
      ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'],
      ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent', '--new-session'],
      ...['--clearenv', 'true'],
    ]);
    if (!probe.ok) return new CommandConfinement('unavailable', settings, { bwrap }, probe.error);
    // maxProcesses 0 turns the process-count limit off (the pids cgroup costs ~15 ms a command).
    const wantPids = (settings.limits?.maxProcesses ?? DEFAULT_COMMAND_LIMITS.maxProcesses) > 0;
    const pids = wantPids
      ? await pidsCgroupRoot(settings.pidsCgroup === undefined ? '/sys/fs/cgroup/pids' : settings.pidsCgroup)
      : undefined;
    return new CommandConfinement('bubblewrap', settings, { bwrap, pids });
  }

  /** Whether a process-count limit is enforced (a writable pids cgroup was found). */
  get boundsProcesses(): boolean {
    return this.tools.pids !== undefined;
  }

  /** One line for logs and diagnostics. */
  describe(): string {
    if (this.mode === 'none') return 'none: commands run unconfined (CLEVERAGENTS_CONFINEMENT=none)';
    if (this.mode === 'unavailable') return `unavailable: ${this.reason ?? 'bubblewrap cannot be used'}`;
    return `bubblewrap (${this.tools.bwrap}); process limit ${this.boundsProcesses ? 'by a pids cgroup' : 'not enforced (no writable pids cgroup)'}`;
  }

  /** How commands will run, as a diagnostics check: unusable bubblewrap fails, running unconfined warns. */
  check(): { status: 'ok' | 'warn' | 'fail'; detail: string; hint?: string } {
    if (this.mode === 'unavailable')
      return { status: 'fail', detail: `commands are refused: ${this.describe()}`, hint: INSTALL_HINT };
    if (this.mode === 'none')
      return { status: 'warn', detail: this.describe(), hint: 'unset CLEVERAGENTS_CONFINEMENT to confine commands' };
    if (!this.boundsProcesses)
      return {
        status: 'warn',
        detail: `${this.describe()}: a runaway fork is stopped only by the time limit`,
        hint: 'run where /sys/fs/cgroup/pids is writable (cgroup v1) to bound process counts',
      };
    return { status: 'ok', detail: this.describe() };
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

  /** bwrap's options for one command (`env`: its environment); later mounts go on top of earlier ones. */
  private async bwrapArgs(inv: CommandInvocation, env: Record<string, string>): Promise<string[]> {
    const a = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--dir', SANDBOX_HOME];
    for (const p of await this.secretPaths()) {
      const st = await stat(p).catch(() => undefined);
      if (st?.isDirectory()) a.push('--tmpfs', p);
      else if (st) a.push('--ro-bind', '/dev/null', p);
    }
    const root = inv.sandboxRoot;
    a.push('--bind', root, root);
    if (inv.writable && inv.writable.length > 0) {
      for (const p of inv.writable) a.push('--bind', p, p);
    } else {
      // The sandbox's git metadata stays read-only: a command that rewrote `.git` (or, in a worktree,
      // its HEAD) could make the server's next checkpoint commit into the user's own branches.
      a.push(...(await gitBinds(root)));
    }
    a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts');
    if (inv.network !== 'allow') a.push('--unshare-net');
    a.push('--die-with-parent', '--new-session', '--chdir', inv.cwd, '--clearenv');
    for (const [k, v] of Object.entries(env)) a.push('--setenv', k, v);
    return a;
  }

  /** The existing secrets to mask (real paths; ones inside the private /tmp are hidden already). */
  private async secretPaths(): Promise<string[]> {
    const wanted = [...HOME_SECRETS.map((p) => path.join(this.settings.home, p)), ...this.settings.secrets];
    const out = new Set<string>();
    for (const p of wanted) {
      const real = await realpath(p).catch(() => undefined);
      if (real && real !== '/' && !isUnder(real, '/tmp')) out.add(real);
    }
    return [...out].sort();
  }
}

const isUnder = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);

/**
 * Read-only binds for the sandbox's git metadata: its `.git` (a directory for a copy sandbox, a
 * file for a worktree), and for a worktree the repository it points into (which may be hidden by
 * the private /tmp or a masked directory otherwise), so `git status` still works inside.
 */
async function gitBinds(root: string): Promise<string[]> {
  const dotGit = path.join(root, '.git');
  const st = await lstat(dotGit).catch(() => undefined);
  if (!st || st.isSymbolicLink()) return [];
  const out = ['--ro-bind', dotGit, dotGit];
  if (!st.isFile()) return out;
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, 'utf8').catch(() => ''));
  if (!m?.[1]) return out;
  const adminDir = path.resolve(root, m[1]);
  const common = await readFile(path.join(adminDir, 'commondir'), 'utf8').catch(() => undefined);
  const repoDir = common ? path.resolve(adminDir, common.trim()) : adminDir;
  for (const d of new Set([repoDir, adminDir])) {
    if (isUnder(d, root) || !(await stat(d).catch(() => undefined))?.isDirectory()) continue;
    out.push('--ro-bind', d, d);
    if (d === repoDir && isUnder(adminDir, repoDir)) break;
  }
  return out;
}

/** A writable cgroup v1 pids hierarchy, or undefined (checked by creating and removing a group). */
async function pidsCgroupRoot(dir: string | null): Promise<string | undefined> {
  if (!dir) return undefined;
  try {
    await access(path.join(dir, 'cgroup.procs'), constants.W_OK);
    const parent = path.join(dir, 'cleveragents');
    await mkdir(parent, { recursive: true });
    const test = path.join(parent, `probe-${process.pid}-${randomBytes(4).toString('hex')}`);
    await mkdir(test);
    await writeFile(path.join(test, 'pids.max'), '1');
    await rmdir(test);
    return parent;
  } catch {
    return undefined;
  }
}

async function createPidsCgroup(parent: string, max: number): Promise<string | undefined> {
  const dir = path.join(parent, `cmd-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(dir);
    await writeFile(path.join(dir, 'pids.max'), String(max));
    return dir;
  } catch {
    await rmdir(dir).catch(() => {});
    return undefined;
  }
}

/** Reads whether the limit was hit, then removes the group (its last processes may take a moment to go). */
async function releaseCgroup(dir: string): Promise<{ processLimitHit: boolean }> {
  const events = await readFile(path.join(dir, 'pids.events'), 'utf8').catch(() => '');
  const processLimitHit = Number(/^max (\d+)/m.exec(events)?.[1] ?? 0) > 0;
  // The group stays busy for a moment after its last process exits: remove it in the background
  // rather than make the command's answer wait (that wait was most of a confined command's overhead).
  void removeWhenEmpty(dir);
  return { processLimitHit };
}

async function removeWhenEmpty(dir: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      await rmdir(dir);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EBUSY') return;
      await new Promise((r) => setTimeout(r, i === 0 ? 5 : 20));
    }
  }
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

/** Resolves a program as execvp would inside the sandbox (which sees the same files). */
export async function resolveProgram(
  program: string,
  cwd: string,
  env: Record<string, string>,
): Promise<string | undefined> {
  if (program.includes('/')) {
    const p = path.resolve(cwd, program);
    return (await access(p, constants.X_OK).then(
      () => true,
      () => false,
    ))
      ? p
      : undefined;
  }
  return which(program, env['PATH'] ?? DEFAULT_PATH);
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

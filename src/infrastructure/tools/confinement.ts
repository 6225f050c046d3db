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
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { bwrapArgs, SANDBOX_HOME } from './bwrap-args.ts';
import {
  buildSystemView,
  describeView,
  isUnderAny,
  maskedPaths,
  nodeInstallation,
  readOnlyPathProblem,
  type SystemView,
} from './confinement-view.ts';
import {
  ConfinementUnavailableError,
  DEFAULT_COMMAND_LIMITS,
  INSTALL_HINT,
  type CommandInvocation,
  type CommandLimits,
  type ConfinementMode,
  type ConfinementSettings,
  type PreparedCommand,
} from './confinement.types.ts';
import { createPidsCgroup, pidsCgroupRoot, releaseCgroup } from './pids-cgroup.ts';
import { DEFAULT_PATH, resolveProgram, which } from './program-lookup.ts';

/** The server's variables a command may see (by exact name, or `LC_*`). */
const ENV_ALLOWLIST = new Set(['PATH', 'LANG', 'LANGUAGE', 'TERM', 'TZ']);

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
    const view = this.tools.view;
    if (!view) throw new ConfinementUnavailableError('the view of the file system was not built');
    const secrets = maskedPaths(this.settings.home, this.settings.secrets);
    const argv = [...(await bwrapArgs(view, secrets, inv, env)), '--', inv.program, ...inv.args];
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

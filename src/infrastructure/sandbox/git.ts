/**
 * The one way this layer runs git. Every git process of ours — on a sandbox or on a user's
 * repository — runs with what a repository could make it run switched off: command-line settings
 * (which beat every config file and reach the git processes git starts) for the named programs
 * (fsmonitor, hooks, ssh, askpass, credential helpers, pagers, signing, automatic maintenance,
 * submodule recursion, every transport), the repository's own filter/diff/merge drivers
 * neutralised (git-config-guard.ts), editors `true`, and none of the caller's GIT_* variables (a
 * GIT_DIR inherited from a hook would point every command at the wrong repository). With
 * `workTree`, `--work-tree` is passed, so a repository's `core.worktree` cannot send a command to
 * another directory.
 *
 * A {@link GitRunner} says where the processes run: {@link DirectGit} here (no shell for one
 * command; a script's arguments are quoted, never parsed), or a sandbox's confined helper
 * (confined-git.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_LIST_ARGS, configGuard } from './git-config-guard.ts';

/** The identity of every commit CleverAgents makes (checkpoints, sandbox bases, applies). */
export const COMMIT_IDENTITY = { name: 'CleverAgents', email: 'plans@cleveragents.invalid' } as const;

/** Settings of every command line (see the module's comment). */
const HARDENING: readonly string[] = [
  '--no-pager',
  ...[
    'core.fsmonitor=false',
    'core.hooksPath=/dev/null',
    'core.sshCommand=false',
    'core.askPass=',
    'credential.helper=',
    'core.pager=cat',
    'protocol.allow=never',
    'gc.auto=0',
    'maintenance.auto=false',
    'submodule.recurse=false',
    'status.submoduleSummary=false',
    'commit.gpgSign=false',
    'tag.gpgSign=false',
    'log.showSignature=false',
    'core.quotePath=false',
    'color.ui=false',
  ].flatMap((c) => ['-c', c]),
];

/** Variables of every git process: no prompt, no editor, no pager, no askpass program. */
export const GIT_ENV: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  GIT_SEQUENCE_EDITOR: 'true',
  GIT_PAGER: 'cat',
  GIT_ASKPASS: '',
};

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_BUFFER = 256 * 1024 * 1024;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface GitOptions {
  /** Extra environment (added after the caller's GIT_* variables are removed). */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Exit codes that are answers rather than failures (e.g. 1 for `merge-tree` with conflicts). */
  okCodes?: readonly number[];
  /**
   * Stop repository discovery at the parent of `dir`: for sandboxes, so that a sandbox that lost
   * its `.git` can never make a `reset --hard` land on a repository above it.
   */
  confine?: boolean;
  /** Commit with the fixed identity (overrides GIT_AUTHOR_* / GIT_COMMITTER_* and user.*). */
  identity?: boolean;
  /** Written to git's stdin. */
  input?: string;
  /** The work tree's root, passed as `--work-tree` (a repository's core.worktree is then ignored). */
  workTree?: string;
  /**
   * The git process dies with the agent (a parent-death signal, where `setpriv` exists): a step of
   * an apply that the agent's crash interrupts must not finish behind the recovery's back.
   * One command only (a script's shell would pass the signal on to none of its children).
   */
  diesWithAgent?: boolean;
}

export interface ScriptOptions extends Omit<GitOptions, 'diesWithAgent'> {
  /** Shell variables the script reads (names `[A-Za-z_][A-Za-z0-9_]*`; values quoted). */
  vars?: Record<string, string>;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Thrown when git fails; the message carries git's stderr. */
export class GitError extends Error {
  readonly args: readonly string[];
  readonly code: number | string | null;
  readonly stderr: string;

  constructor(args: readonly string[], code: number | string | null, stderr: string) {
    super(`git ${args.join(' ')} failed (${code ?? 'killed'}): ${stderr.trim() || 'no output'}`);
    this.args = args;
    this.code = code;
    this.stderr = stderr;
    this.name = 'GitError';
  }
}

/** Where our git processes run. */
export interface GitRunner {
  /** Runs `git …args` in `dir`; resolves with its output, rejects with a {@link GitError}. */
  run(dir: string, args: readonly string[], opts?: GitOptions): Promise<GitResult>;
  /**
   * Runs a POSIX shell script in which `g …` is our git in `dir` (every setting above), `$T` a
   * path prefix for the script's own temporary files (removed afterwards), and `opts.vars` shell
   * variables. `shown` names it in errors.
   */
  script(dir: string, body: string, opts?: ScriptOptions, shown?: readonly string[]): Promise<GitResult>;
  /** Runs `work` with a new directory this runner's git can read and write, removed afterwards. */
  scratch<T>(work: (dir: string) => Promise<T>): Promise<T>;
}

/** `s` as one word of a POSIX shell, whatever it holds (single quotes; a quote as `'\''`). */
export const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** git's arguments before a command of ours in `dir`: `-C dir`, `--work-tree`, the settings. */
export function gitArgs(dir: string, opts: Pick<GitOptions, 'identity' | 'workTree'>): string[] {
  const identity = opts.identity
    ? ['-c', `user.name=${COMMIT_IDENTITY.name}`, '-c', `user.email=${COMMIT_IDENTITY.email}`]
    : [];
  const workTree = opts.workTree === undefined ? [] : [`--work-tree=${opts.workTree}`];
  return ['-C', dir, ...workTree, ...HARDENING, ...identity];
}

/** The variables a command of ours sets besides {@link GIT_ENV}: discovery's ceiling, the identity, the caller's. */
export function commandEnv(dir: string, opts: GitOptions): Record<string, string> {
  const env: Record<string, string> = {};
  if (opts.confine) env['GIT_CEILING_DIRECTORIES'] = path.dirname(path.resolve(dir));
  if (opts.identity) {
    env['GIT_AUTHOR_NAME'] = env['GIT_COMMITTER_NAME'] = COMMIT_IDENTITY.name;
    env['GIT_AUTHOR_EMAIL'] = env['GIT_COMMITTER_EMAIL'] = COMMIT_IDENTITY.email;
  }
  return { ...env, ...opts.env };
}

/**
 * The start of a script: the `g` function, then the variables (`exports` exported to git, `vars`
 * the script's own). Every value is quoted: nothing in one reaches the shell's parsing.
 */
export function scriptPrelude(
  dir: string,
  opts: ScriptOptions,
  exports: Record<string, string>,
  vars: Record<string, string>,
): string {
  const lines = [`g() { git ${gitArgs(dir, opts).map(quote).join(' ')} "$@"; }`];
  for (const [k, v] of Object.entries(exports)) {
    if (!VAR_NAME.test(k)) throw new Error(`not a variable name: ${JSON.stringify(k)}`);
    lines.push(`export ${k}=${quote(v)}`);
  }
  for (const [k, v] of Object.entries(vars)) {
    if (!VAR_NAME.test(k)) throw new Error(`not a variable name: ${JSON.stringify(k)}`);
    lines.push(`${k}=${quote(v)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A script that runs `commands` one after another, stopping at the first that fails. */
export const chainBody = (commands: readonly (readonly string[])[]): string =>
  commands.map((c) => `g ${c.map(quote).join(' ')}`).join(' &&\n');

/** What a chain of commands is called in errors: `add … && git commit …`. */
export const chainShown = (commands: readonly (readonly string[])[]): string[] =>
  commands.flatMap((c, i) => (i === 0 ? [...c] : ['&&', 'git', ...c]));

/** `setpriv`, when this system has it: the parent-death signal of {@link GitOptions.diesWithAgent}. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** The environment of the agent without GIT_* (and SSH_ASKPASS, which git falls back to). */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('GIT_') && k !== 'SSH_ASKPASS') env[k] = v;
  return { ...env, ...GIT_ENV };
}

/** git processes started by the agent itself. */
export class DirectGit implements GitRunner {
  async run(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<GitResult> {
    const env = { ...baseEnv(), ...(await this.#overrides(dir)), ...commandEnv(dir, opts) };
    const argv = [...gitArgs(dir, opts), ...args];
    const [file, full] =
      opts.diesWithAgent && SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', 'git', ...argv]] : ['git', argv];
    return runProcess(file, full, env, opts, args);
  }

  async script(
    dir: string,
    body: string,
    opts: ScriptOptions = {},
    shown: readonly string[] = ['(script)'],
  ): Promise<GitResult> {
    const env = { ...baseEnv(), ...(await this.#overrides(dir)), ...commandEnv(dir, opts) };
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'cleveragents-git-'));
    try {
      const text = scriptPrelude(dir, opts, {}, { T: path.join(tmp, 't'), ...opts.vars }) + body;
      return await runProcess('/bin/sh', ['-c', text], env, opts, shown);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  async scratch<T>(work: (dir: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cleveragents-git-'));
    try {
      return await work(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  #overrides(dir: string): Promise<Record<string, string>> {
    return configGuard.env(dir, async () => {
      const env = { ...baseEnv(), ...commandEnv(dir, {}) };
      return (await runProcess('git', [...gitArgs(dir, {}), ...CONFIG_LIST_ARGS], env, {}, CONFIG_LIST_ARGS)).stdout;
    });
  }
}

/**
 * Runs a process in a process group of its own, so that the time limit kills it and everything it
 * started (a script's git too).
 */
function runProcess(
  file: string,
  argv: readonly string[],
  env: Record<string, string>,
  opts: Pick<GitOptions, 'timeoutMs' | 'okCodes' | 'input'>,
  shown: readonly string[],
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let size = 0;
    let killed: string | undefined;
    const kill = (why: string): void => {
      killed ??= why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => kill('timed out'), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const take = (s: string, into: 'out' | 'err'): void => {
      size += s.length;
      if (size > MAX_BUFFER) return kill('output too large');
      if (into === 'out') stdout += s;
      else stderr += s;
    };
    child.stdout.setEncoding('utf8').on('data', (s: string) => take(s, 'out'));
    child.stderr.setEncoding('utf8').on('data', (s: string) => take(s, 'err'));
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new GitError(shown, (e as NodeJS.ErrnoException).code ?? null, e.message));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (killed !== undefined) return reject(new GitError(shown, killed, stderr));
      if (code === 0 || (code !== null && opts.okCodes?.includes(code))) return resolve({ stdout, stderr, code });
      reject(new GitError(shown, code, stderr));
    });
  });
}

/** The process's runner of git processes started by the agent itself. */
export const directGit = new DirectGit();

/** Runs `git -C dir …args` here; resolves with stdout, rejects with a {@link GitError}. */
export function git(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<GitResult> {
  return directGit.run(dir, args, opts);
}

/** `git …` and return stdout without the trailing newline. */
export async function gitOut(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<string> {
  return (await git(dir, args, opts)).stdout.replace(/\n$/, '');
}

/** `run.run(…)`'s stdout without the trailing newline. */
export async function outOf(
  run: GitRunner,
  dir: string,
  args: readonly string[],
  opts: GitOptions = {},
): Promise<string> {
  return (await run.run(dir, args, opts)).stdout.replace(/\n$/, '');
}

/**
 * Runs git commands in `dir` one after another, stopping at the first that fails (its exit code
 * and stderr are the result's), from one shell (see {@link GitRunner.script}).
 */
export function gitChain(
  dir: string,
  commands: readonly (readonly string[])[],
  opts: ScriptOptions = {},
  run: GitRunner = directGit,
): Promise<GitResult> {
  return run.script(dir, chainBody(commands), opts, chainShown(commands));
}

/** Splits NUL-separated output, dropping the trailing empty field. */
export function splitNul(s: string): string[] {
  const parts = s.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/** Serialises async work per key (one create per sandbox path, one apply per repository). */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(work, work);
    const tail = next.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await next;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

export { headFromFiles, worktreeFiles, worktreeHead, type WorktreeFiles, type WorktreeHead } from './git-files.ts';

/**
 * The one way this layer runs git: `execFile` (no shell; several commands in a row from one
 * `/bin/sh` whose script holds no argument, see {@link gitChain}), a time limit, no prompts, no
 * hooks, no signing, and none of the caller's GIT_* variables (a GIT_DIR inherited from a hook
 * would point every command at the wrong repository).
 */
import { execFile } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The identity of every commit CleverAgents makes (checkpoints, sandbox bases, applies). */
export const COMMIT_IDENTITY = { name: 'CleverAgents', email: 'plans@cleveragents.invalid' } as const;

const BASE_CONFIG = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'core.quotePath=false',
  '-c',
  'color.ui=false',
];
const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_BUFFER = 256 * 1024 * 1024;

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
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Thrown when git fails; the message carries git's stderr. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | string | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (${code ?? 'killed'}): ${stderr.trim() || 'no output'}`);
    this.name = 'GitError';
  }
}

/** Runs `git -C dir …args`; resolves with stdout, rejects with a {@link GitError}. */
export function git(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<GitResult> {
  return gitChain(dir, [args], opts);
}

const ARG_VAR = 'CLEVERAGENTS_GIT_ARG_';

/** The environment every git command of ours runs with (see {@link GitOptions}). */
export function gitEnv(dir: string, opts: GitOptions = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_EDITOR = 'true';
  if (opts.confine) env.GIT_CEILING_DIRECTORIES = path.dirname(path.resolve(dir));
  if (opts.identity) {
    env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = COMMIT_IDENTITY.name;
    env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = COMMIT_IDENTITY.email;
  }
  Object.assign(env, opts.env);
  return env;
}

/** git's arguments for one command of ours in `dir`: `-C dir`, our fixed configuration, then `args`. */
export function gitArgs(dir: string, opts: GitOptions, args: readonly string[]): string[] {
  const identity = opts.identity
    ? ['-c', `user.name=${COMMIT_IDENTITY.name}`, '-c', `user.email=${COMMIT_IDENTITY.email}`]
    : [];
  return ['-C', dir, ...BASE_CONFIG, ...identity, ...args];
}

/**
 * Runs git commands in `dir` one after another, stopping at the first that fails (its exit code
 * and stderr are the result's), from a single process the agent spawns. Each process the agent
 * spawns is a fork of the agent, whose cost grows with its resident memory (here ~2.5 ms for a
 * 50 MB process, ~11 ms for a 250 MB one); a plan pays two git commands per write step (its
 * checkpoint), so several commands run from one `/bin/sh`, a small process that forks git cheaply.
 * No argument goes through the shell's parsing: each is an environment variable the script only
 * expands in double quotes, and the last command replaces the shell (`exec`), so that the time
 * limit kills git itself once it runs; a command before it that is running then finishes on its
 * own. One command runs as git itself, without a shell.
 */
export function gitChain(
  dir: string,
  commands: readonly (readonly string[])[],
  opts: GitOptions = {},
): Promise<GitResult> {
  const env = gitEnv(dir, opts);
  const fulls = commands.map((args) => gitArgs(dir, opts, args));
  // What a failure names: the commands as the chain ran them (`add … && git commit …`).
  const args = commands.flatMap((c, i) => (i === 0 ? c : ['&&', 'git', ...c]));
  let file = 'git';
  let argv = fulls[0] ?? [];
  if (fulls.length > 1) {
    let n = 0;
    const lines = fulls.map((full, i) => {
      const words = full.map((a) => {
        const name = `${ARG_VAR}${n++}`;
        env[name] = a;
        return `"$${name}"`;
      });
      return `${i === fulls.length - 1 ? 'exec ' : ''}git ${words.join(' ')}`;
    });
    file = '/bin/sh';
    argv = ['-c', lines.join(' && ')];
  }
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      argv,
      {
        env,
        timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxBuffer: MAX_BUFFER,
        encoding: 'utf8',
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr, code: 0 });
        const code = typeof err.code === 'number' ? err.code : null;
        if (code !== null && opts.okCodes?.includes(code)) return resolve({ stdout, stderr, code });
        reject(new GitError(args, err.killed ? `timed out or killed` : (err.code ?? null), stderr || err.message));
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.input ?? '');
  });
}

/** `git … ` and return stdout without the trailing newline. */
export async function gitOut(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<string> {
  return (await git(dir, args, opts)).stdout.replace(/\n$/, '');
}

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** A work tree's own git directory, and the repository's common one (shared by its work trees). */
export interface WorktreeFiles {
  gitDir: string;
  common: string;
}

/** What HEAD of a work tree is: its branch (undefined when detached) and the commit it points at. */
export interface WorktreeHead extends WorktreeFiles {
  ref: string | undefined;
  oid: string;
}

/** A file's text, trimmed; undefined when it cannot be read. */
function readTrimmed(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Where the git files of the work tree at `root` are, read as gitrepository-layout(5) describes
 * them: `.git` a directory or a `gitdir:` file, then `commondir`. Undefined for anything else.
 * Synchronous, as the other reads of a plan step's git files: an asynchronous read is a round trip
 * through libuv's thread pool that costs ten times the read.
 */
export function worktreeFiles(root: string): WorktreeFiles | undefined {
  const dotGit = path.join(root, '.git');
  let gitDir: string;
  try {
    const st = lstatSync(dotGit);
    if (st.isDirectory()) gitDir = dotGit;
    else {
      const link = st.isFile() ? readFileSync(dotGit, 'utf8').trim() : '';
      if (!link.startsWith('gitdir: ')) return undefined;
      gitDir = path.resolve(root, link.slice(8));
    }
  } catch {
    return undefined;
  }
  const common = readTrimmed(path.join(gitDir, 'commondir'));
  return { gitDir, common: common === undefined ? gitDir : path.resolve(gitDir, common) };
}

/**
 * HEAD of the work tree at `root`, read from the repository's files (see {@link worktreeFiles};
 * then `HEAD` and a loose ref). Undefined whenever the layout is anything else (a packed ref, the
 * reftable backend, an unexpected file).
 */
export function worktreeHead(root: string): WorktreeHead | undefined {
  const files = worktreeFiles(root);
  const head = files && readTrimmed(path.join(files.gitDir, 'HEAD'));
  if (!files || head === undefined) return undefined;
  if (OBJECT_ID.test(head)) return { ...files, ref: undefined, oid: head };
  // Branches live in the common directory, shared by all of a repository's work trees.
  const ref = /^ref: (refs\/heads\/[^\0]+)$/.exec(head)?.[1];
  if (ref === undefined || ref.split('/').some((s) => s === '..' || s === '.' || s === '')) return undefined;
  const oid = readTrimmed(path.join(files.common, ref));
  return oid !== undefined && OBJECT_ID.test(oid) ? { ...files, ref, oid } : undefined;
}

/**
 * The commit HEAD of the work tree at `root` points at, read from the files ({@link worktreeHead})
 * instead of a `git rev-parse HEAD` process, which a plan paid after every write step. Undefined
 * when the files do not say: the caller then asks git.
 */
export function headFromFiles(root: string): string | undefined {
  return worktreeHead(root)?.oid;
}

/** Splits NUL-separated output, dropping the trailing empty field. */
export function splitNul(s: string): string[] {
  const parts = s.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/**
 * The tree object of everything in a sandbox's work tree right now (tracked, changed and
 * untracked files), built in a throw-away index so the sandbox's own index — and therefore what the
 * next checkpoint records — is untouched. `force` also takes ignored files (copy sandboxes track
 * everything).
 */
export async function snapshotTree(root: string, force: boolean): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'cleveragents-index-'));
  try {
    const index = path.join(tmp, 'index');
    const real = path.resolve(root, await gitOut(root, ['rev-parse', '--git-path', 'index'], { confine: true }));
    // Starting from a copy of the real index keeps its stat cache: `add -A` then rehashes only what changed.
    await copyFile(real, index).catch(() => undefined);
    const env = { GIT_INDEX_FILE: index };
    const staged = await gitChain(root, [['add', '-A', ...(force ? ['-f'] : []), '--', '.'], ['write-tree']], {
      env,
      confine: true,
    });
    // `add -A` prints nothing; write-tree prints the tree's id.
    return staged.stdout.trim().split('\n').at(-1) ?? '';
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
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

/**
 * A sandbox's git, run inside the same confinement as the commands that could have planted
 * something in it: one long-lived shell per sandbox inside bubblewrap (started on first use, ended
 * after a while without work, on `close` and when the sandbox goes), to which each git command or
 * script is handed as a file. One process per sandbox rather than one bubblewrap per command: a
 * bubblewrap start costs 10–20 ms here, most of a plan step's budget for its checkpoint.
 *
 * The exchange: the agent writes `<io>/<n>.sh` (the script, every argument quoted) and `<io>/<n>.in`,
 * then the line `n` on the shell's stdin; the shell runs the script with those as stdin and
 * `<io>/<n>.out` / `<io>/<n>.err` as output and answers `n <exit code>`. `<io>` is this process's
 * directory (`<pid>-<random>`) in one beside the sandbox (outside it: a command in the sandbox
 * cannot write a script there; one per process: every local CLI command runs its own agent, and
 * two may work on one plan at once), the only place the helper may write besides the sandbox and
 * the repository's git directory.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processExists } from '../system/process-exists.ts';
import type { CommandConfinement } from '../tools/confinement.ts';
import type { PreparedCommand } from '../tools/confinement.types.ts';
import { CONFIG_LIST_ARGS, configGuard } from './git-config-guard.ts';
import {
  GIT_ENV,
  GitError,
  commandEnv,
  gitArgs,
  quote,
  scriptPrelude,
  type GitOptions,
  type GitResult,
  type GitRunner,
  type ScriptOptions,
} from './git.ts';

const IDLE_MS = 30_000;
const DEFAULT_TIMEOUT_MS = 120_000;

/** The helper: read a request number, run its script, answer with the number and the exit code. */
const LOOP = `d=$1
while IFS= read -r n; do
  sh "$d/$n.sh" <"$d/$n.in" >"$d/$n.out" 2>"$d/$n.err"
  echo "$n $?"
done`;

export interface ConfinedGitOptions {
  confinement: CommandConfinement;
  /** The sandbox's root: the helper's working directory and its writable tree. */
  root: string;
  /** Where the exchange directories of the sandbox's helpers go (outside the root). */
  io: string;
  /** More directories the helper's git writes: the repository's git directory. */
  writable: readonly string[];
  idleMs?: number;
}

/** A started helper. */
interface Helper {
  child: ChildProcessWithoutNullStreams;
  prepared: PreparedCommand;
  /** The answer each request waits for (-1: the helper stopped). */
  answers: Map<number, (code: number) => void>;
  /** The helper's own stderr (bubblewrap's and the shell's), for the error when it stops. */
  stderr: string;
  stopped?: string;
}

type Refable = { ref?: () => void; unref?: () => void };

export class ConfinedGit implements GitRunner {
  #helper: Helper | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #next = 0;
  #idle: NodeJS.Timeout | undefined;
  #closed = false;
  #starting: Promise<Helper> | undefined;
  /** This process's exchange directory. */
  readonly #io: string;
  /** Whether what stopped agents left beside it was cleared. */
  #fresh = false;

  private readonly opts: ConfinedGitOptions;

  constructor(opts: ConfinedGitOptions) {
    this.opts = opts;
    this.#io = path.join(opts.io, `${process.pid}-${randomBytes(4).toString('hex')}`);
  }

  run(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<GitResult> {
    // `exec`: the shell becomes git, one process fewer.
    const body = `exec git ${[...gitArgs(dir, opts), ...args].map(quote).join(' ')}\n`;
    return this.script(dir, body, opts, args);
  }

  script(
    dir: string,
    body: string,
    opts: ScriptOptions = {},
    shown: readonly string[] = ['(script)'],
  ): Promise<GitResult> {
    // One request at a time: the helper runs them in order, and a time limit starts when one is sent.
    const next = this.#queue.then(async () => {
      const overrides = await configGuard.env(
        dir,
        async () => (await this.#send(dir, `g ${CONFIG_LIST_ARGS.join(' ')}\n`, {}, CONFIG_LIST_ARGS, {})).stdout,
      );
      return this.#send(dir, body, opts, shown, overrides);
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async scratch<T>(work: (dir: string) => Promise<T>): Promise<T> {
    await this.#ensure();
    const dir = path.join(this.#io, `s${this.#next++}`);
    mkdirSync(dir, { recursive: true });
    try {
      return await work(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Stops the helper; `forGood`: it is not started again (the sandbox is being removed). */
  close(forGood = true): void {
    this.#closed ||= forGood;
    clearTimeout(this.#idle);
    const h = this.#helper;
    this.#helper = undefined;
    if (h) {
      h.stopped ??= 'stopped';
      // It ends on its own once its stdin closes; one stuck in a command is killed.
      h.child.stdin.end();
      this.#hold(h, false);
      setTimeout(() => h.child.kill('SIGKILL'), 5_000).unref();
    }
    if (forGood) rmSync(this.#io, { recursive: true, force: true });
  }

  async #send(
    dir: string,
    body: string,
    opts: ScriptOptions,
    shown: readonly string[],
    overrides: Record<string, string>,
  ): Promise<GitResult> {
    const h = await this.#ensure();
    const n = this.#next++;
    const base = path.join(this.#io, String(n));
    const exports = { ...overrides, ...commandEnv(dir, opts) };
    try {
      writeFileSync(`${base}.sh`, scriptPrelude(dir, opts, exports, { T: `${base}.t`, ...opts.vars }) + body);
      writeFileSync(`${base}.in`, opts.input ?? '');
      clearTimeout(this.#idle);
      this.#hold(h, true);
      const code = await new Promise<number>((resolve) => {
        const timer = setTimeout(() => this.#kill(h, 'a git command timed out'), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
        h.answers.set(n, (c) => {
          clearTimeout(timer);
          resolve(c);
        });
        h.child.stdin.write(`${n}\n`);
      });
      if (code < 0)
        throw new GitError(shown, h.stopped === 'a git command timed out' ? 'timed out' : null, this.#why(h));
      const stdout = readText(`${base}.out`);
      const stderr = readText(`${base}.err`);
      if (code === 0 || opts.okCodes?.includes(code)) return { stdout, stderr, code };
      throw new GitError(shown, code, stderr);
    } finally {
      h.answers.delete(n);
      for (const f of safeList(this.#io))
        if (f.startsWith(`${n}.`)) rmSync(path.join(this.#io, f), { recursive: true, force: true });
      if (this.#helper === h && h.answers.size === 0) this.#rest(h);
    }
  }

  /** The running helper, started if need be (one start at a time). */
  #ensure(): Promise<Helper> {
    if (this.#closed) return Promise.reject(new Error(`the sandbox ${this.opts.root} is being removed`));
    if (this.#helper && this.#helper.stopped === undefined) return Promise.resolve(this.#helper);
    this.#starting ??= this.#start().finally(() => (this.#starting = undefined));
    return this.#starting;
  }

  async #start(): Promise<Helper> {
    const { confinement, root, writable } = this.opts;
    const io = this.#io;
    if (!this.#fresh) {
      // What the helpers of agents that are gone left behind.
      for (const d of safeList(this.opts.io)) {
        const pid = Number(/^(\d+)-/.exec(d)?.[1]);
        if (pid && pid !== process.pid && !processExists(pid))
          rmSync(path.join(this.opts.io, d), { recursive: true, force: true });
      }
      this.#fresh = true;
    }
    mkdirSync(io, { recursive: true, mode: 0o700 });
    const prepared = await confinement.prepare({
      program: '/bin/sh',
      args: ['-c', LOOP, 'sh', io],
      cwd: root,
      sandboxRoot: root,
      network: 'none',
      env: { ...GIT_ENV, GIT_CEILING_DIRECTORIES: path.dirname(root) },
      writable: [io, ...writable],
    });
    const child = spawn(prepared.program, prepared.args, {
      env: prepared.env,
      cwd: prepared.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const h: Helper = { child, prepared, answers: new Map(), stderr: '' };
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      pending += s;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const [n = '', code = ''] = pending.slice(0, nl).split(' ');
        pending = pending.slice(nl + 1);
        h.answers.get(Number(n))?.(Number(code));
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      h.stderr = (h.stderr + s).slice(-4096);
    });
    child.stdin.on('error', () => undefined);
    const stop = (why: string): void => {
      h.stopped ??= why;
      if (this.#helper === h) this.#helper = undefined;
      for (const answer of [...h.answers.values()]) answer(-1);
    };
    child.on('error', (e) => stop(e.message));
    child.on('exit', (code, signal) => {
      stop(`exited (${code ?? signal})`);
      void prepared.release().catch(() => undefined);
    });
    this.#helper = h;
    return h;
  }

  #why(h: Helper): string {
    return `the sandbox's git helper stopped (${h.stopped ?? 'unknown'})${h.stderr.trim() ? `: ${h.stderr.trim()}` : ''}`;
  }

  #kill(h: Helper, why: string): void {
    h.stopped ??= why;
    h.child.kill('SIGKILL');
  }

  #hold(h: Helper, ref: boolean): void {
    for (const s of [h.child, h.child.stdin, h.child.stdout, h.child.stderr] as Refable[])
      (ref ? s.ref : s.unref)?.call(s);
  }

  /** Nothing is being asked: the helper may not keep the agent alive, and ends when left idle. */
  #rest(h: Helper): void {
    this.#hold(h, false);
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#helper === h) this.close(false);
    }, this.opts.idleMs ?? IDLE_MS);
    this.#idle.unref();
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

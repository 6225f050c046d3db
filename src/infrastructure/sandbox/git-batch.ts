/**
 * A git command that answers questions on its standard input for as long as it runs
 * (`hash-object --stdin-paths`, `check-ignore --stdin`): one process for a sandbox's many
 * checkpoints instead of one or two per checkpoint. It does not keep the agent alive, and it ends
 * after a while without questions.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { gitArgs, gitEnv, type GitOptions } from './git.js';

const IDLE_MS = 30_000;
const ASK_TIMEOUT_MS = 60_000;

/** A child process and its pipes: each can stop keeping the event loop alive. */
type Refable = { ref?: () => void; unref?: () => void };

interface Waiter {
  fields: number;
  resolve: (fields: string[]) => void;
  reject: (e: Error) => void;
}

export class GitBatch {
  #child: ChildProcessWithoutNullStreams | undefined;
  #out = '';
  #err = '';
  #waiters: Waiter[] = [];
  #idle: NodeJS.Timeout | undefined;
  #failure: Error | undefined;

  /** `separator` ends each field of the answers (`\n` or `\0`). */
  constructor(
    private readonly dir: string,
    private readonly args: readonly string[],
    private readonly separator: '\n' | '\0',
    private readonly opts: GitOptions = {},
  ) {}

  /**
   * Writes `input` and resolves with the next `fields` fields of the answer. Rejects when the
   * command has failed (it is then not asked again: the caller makes a new one).
   */
  ask(input: string, fields: number): Promise<string[]> {
    if (this.#failure) return Promise.reject(this.#failure);
    const child = this.#start();
    clearTimeout(this.#idle);
    this.#hold(true);
    return new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(
        () => this.#fail(new Error(`git ${this.args.join(' ')} did not answer`)),
        ASK_TIMEOUT_MS,
      );
      const done = (): void => {
        clearTimeout(timer);
        if (this.#waiters.length === 0) this.#rest();
      };
      this.#waiters.push({
        fields,
        resolve: (f) => {
          done();
          resolve(f);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      child.stdin.write(input);
      this.#drain();
    });
  }

  /** Whether it can still be asked. */
  get usable(): boolean {
    return this.#failure === undefined;
  }

  /** Ends the command (its stdin closed; it exits on its own). */
  close(): void {
    clearTimeout(this.#idle);
    this.#fail(new Error('closed'));
  }

  #start(): ChildProcessWithoutNullStreams {
    if (this.#child) return this.#child;
    const child = spawn('git', gitArgs(this.dir, this.opts, this.args), {
      env: gitEnv(this.dir, this.opts),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      this.#out += d;
      this.#drain();
    });
    child.stderr.on('data', (d: string) => {
      this.#err = (this.#err + d).slice(-4096);
    });
    child.stdin.on('error', (e) => this.#fail(e));
    child.on('error', (e) => this.#fail(e));
    child.on('exit', (code, signal) =>
      this.#fail(
        new Error(`git ${this.args.join(' ')} exited (${code ?? signal}): ${this.#err.trim() || 'no output'}`),
      ),
    );
    this.#child = child;
    return child;
  }

  #drain(): void {
    for (;;) {
      const w = this.#waiters[0];
      if (!w) return;
      const fields: string[] = [];
      let at = 0;
      while (fields.length < w.fields) {
        const end = this.#out.indexOf(this.separator, at);
        if (end < 0) return;
        fields.push(this.#out.slice(at, end));
        at = end + 1;
      }
      this.#out = this.#out.slice(at);
      this.#waiters.shift();
      w.resolve(fields);
    }
  }

  /** Nothing is being asked: the process may not keep the agent alive, and ends when left idle. */
  #rest(): void {
    this.#hold(false);
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => this.close(), IDLE_MS);
    this.#idle.unref();
  }

  #hold(ref: boolean): void {
    const c = this.#child;
    if (!c) return;
    for (const s of [c, c.stdin, c.stdout, c.stderr] as Refable[]) (ref ? s.ref : s.unref)?.call(s);
  }

  #fail(e: Error): void {
    if (this.#failure) return;
    this.#failure = e;
    clearTimeout(this.#idle);
    const child = this.#child;
    if (child) {
      child.stdin.end();
      this.#hold(false);
      if (child.exitCode === null) setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    }
    for (const w of this.#waiters.splice(0)) w.reject(e);
  }
}

/**
 * Runs a program (no shell) in its own process group, so a timeout or an abort kills everything it
 * started, not just the direct child. Output (stdout and stderr interleaved as they arrive) is
 * handed to a listener as it comes and capped: the first and the last half of KEPT_OUTPUT_BYTES
 * are kept, and a program that goes on past the output limit is killed.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { KEPT_OUTPUT_BYTES, type CommandOutputChunk } from '../../application/index.ts';
import { ConfinementUnavailableError, type CommandInvocation } from './confinement.types.ts';
import { type CommandConfinement } from './confinement.ts';

/** Room for the line that says what was cut, so the kept text stays within KEPT_OUTPUT_BYTES. */
const CUT_LINE_ROOM = 100;
export const MAX_OUTPUT_BYTES = KEPT_OUTPUT_BYTES - CUT_LINE_ROOM;
/** After SIGTERM, the group has this long to exit before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** After the program exits, how long its stdout/stderr may stay open (held by a leftover process). */
const DRAIN_MS = 1000;

export interface ProcessRequest {
  program: string;
  args: readonly string[];
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** The whole environment of the program (default: ours, minus variables that redirect git). */
  env?: Record<string, string>;
  /** Output (both streams) after which the program is killed (default: no limit). */
  maxOutputBytes?: number;
  /** Written to the program's stdin, which is then closed (default: no stdin). */
  input?: string | undefined;
  /** Also keep stdout on its own (`ProcessResult.stdout`, capped like `output`). */
  captureStdout?: boolean | undefined;
  /** Called with each piece of output as it arrives (a listener that throws is ignored). */
  onOutput?: ((chunk: CommandOutputChunk) => void) | undefined;
}

/** The output as kept: its head and its tail (one piece when nothing was cut), and what was written. */
export interface KeptOutput {
  head: string;
  /** '' when nothing was cut (all of it is in `head`). */
  tail: string;
  /** Bytes written in all (both streams). */
  bytes: number;
  /** Line feeds written in all. */
  newlines: number;
  truncated: boolean;
}

export interface ProcessResult {
  /** null when killed or when the program could not be started. */
  exitCode: number | null;
  /** The signal that ended it, if any. */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Killed because it produced more than `maxOutputBytes`. */
  outputLimited: boolean;
  /** Everything kept (at most KEPT_OUTPUT_BYTES): when cut, head and tail with a line saying how much is missing. */
  output: string;
  truncated: boolean;
  /** The same output in parts, with what was written in all. */
  kept: KeptOutput;
  /** Set when the program could not be started (e.g. ENOENT). */
  spawnError?: string;
  /** stdout alone, when the request asked for it. */
  stdout?: string;
}

/** The environment of commands: ours, minus variables that would point git somewhere else. */
function commandEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      !/^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE|PREFIX|CEILING_DIRECTORIES)$/.test(
        k,
      )
    )
      env[k] = v;
  }
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

export function runProcess(req: ProcessRequest): Promise<ProcessResult> {
  if (req.signal.aborted)
    return Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: true,
      outputLimited: false,
      output: '',
      truncated: false,
      kept: new CappedOutput(MAX_OUTPUT_BYTES).parts(),
    });
  return new Promise((resolve) => new ProcessRun(req, resolve).start());
}

type Spawned = ChildProcessByStdio<Writable, Readable, Readable>;
type Ending = Omit<ProcessResult, 'output' | 'truncated' | 'kept' | 'timedOut' | 'aborted' | 'outputLimited'>;

/** One program from spawn to result: its process group, its timers, and its output as it comes. */
class ProcessRun {
  private readonly req: ProcessRequest;
  private readonly resolve: (r: ProcessResult) => void;
  private readonly out = new CappedOutput(MAX_OUTPUT_BYTES);
  private readonly stdoutOnly: CappedOutput | undefined;
  // Decoded per stream, so a character split across two reads reaches the listener whole.
  private readonly decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  private readonly timers: NodeJS.Timeout[] = [];
  private timedOut = false;
  private aborted = false;
  private outputLimited = false;
  private produced = 0;
  private settled = false;
  private child: Spawned | undefined;
  private readonly onAbort = (): void => {
    this.aborted = true;
    this.stop();
  };

  constructor(req: ProcessRequest, resolve: (r: ProcessResult) => void) {
    this.req = req;
    this.resolve = resolve;
    this.stdoutOnly = req.captureStdout ? new CappedOutput(MAX_OUTPUT_BYTES) : undefined;
  }

  start(): void {
    const { req } = this;
    const child = spawn(req.program, [...req.args], {
      cwd: req.cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: req.env ?? commandEnv(),
    });
    this.child = child;
    // Without input stdin is at its end at once (as /dev/null would be). A program that exits
    // without reading its input closes the pipe: not an error of ours.
    child.stdin.on('error', () => {});
    child.stdin.end(req.input ?? '');
    req.signal.addEventListener('abort', this.onAbort, { once: true });
    this.timers.push(
      setTimeout(() => {
        this.timedOut = true;
        this.stop();
      }, req.timeoutMs),
    );
    child.stdout.on('data', (b: Buffer) => {
      this.stdoutOnly?.push(b);
      if (req.onOutput) this.tell('stdout', this.decoders.stdout.write(b));
      this.onData(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      if (req.onOutput) this.tell('stderr', this.decoders.stderr.write(b));
      this.onData(b);
    });
    child.on('error', (e) => this.finish({ exitCode: null, signal: null, spawnError: e.message }));
    child.on('exit', (code, sig) => this.onExit(child, code, sig));
  }

  /** The program is gone: its group goes with it, and the result waits (a while) for its output to close. */
  private onExit(child: Spawned, code: number | null, sig: NodeJS.Signals | null): void {
    // Whatever the program left running in its group (a background job) goes with it.
    this.killGroup('SIGKILL');
    let closed = false;
    const done = (): void =>
      this.finish({ exitCode: this.timedOut || this.aborted || this.outputLimited ? null : code, signal: sig });
    child.on('close', () => {
      closed = true;
      done();
    });
    this.timers.push(setTimeout(() => closed || done(), DRAIN_MS));
  }

  private killGroup(sig: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, sig);
    } catch {
      // The group is already gone.
    }
  }

  private stop(): void {
    this.killGroup('SIGTERM');
    this.timers.push(setTimeout(() => this.killGroup('SIGKILL'), KILL_GRACE_MS));
  }

  private tell(stream: CommandOutputChunk['stream'], text: string): void {
    if (!this.req.onOutput || text === '') return;
    try {
      this.req.onOutput({ stream, text });
    } catch {
      // A listener's failure is its own: the command and its result go on.
    }
  }

  private onData(b: Buffer): void {
    this.out.push(b);
    this.produced += b.length;
    const limit = this.req.maxOutputBytes;
    if (limit !== undefined && this.produced > limit && !this.outputLimited) {
      this.outputLimited = true;
      this.killGroup('SIGKILL');
    }
  }

  private finish(r: Ending): void {
    if (this.settled) return;
    this.settled = true;
    for (const t of this.timers) clearTimeout(t);
    this.req.signal.removeEventListener('abort', this.onAbort);
    this.child?.stdout.destroy();
    this.child?.stderr.destroy();
    this.tell('stdout', this.decoders.stdout.end());
    this.tell('stderr', this.decoders.stderr.end());
    this.resolve({
      ...r,
      timedOut: this.timedOut,
      aborted: this.aborted,
      outputLimited: this.outputLimited,
      output: this.out.text(),
      truncated: this.out.truncated,
      kept: this.out.parts(),
      ...(this.stdoutOnly ? { stdout: this.stdoutOnly.text() } : {}),
    });
  }
}

export interface ConfinedResult extends ProcessResult {
  /** The process-count limit stopped a fork (only where a pids cgroup enforces it). */
  processLimitHit: boolean;
}

/**
 * Runs one command the way `confinement` says (refusing it, with the reason and how to install
 * bubblewrap, when confinement is required but unavailable), under its output limit.
 */
export async function runConfined(
  confinement: CommandConfinement,
  inv: CommandInvocation,
  opts: Pick<ProcessRequest, 'timeoutMs' | 'signal' | 'input' | 'captureStdout' | 'onOutput'>,
): Promise<ConfinedResult> {
  const none = {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: false,
    outputLimited: false,
    output: '',
    kept: { head: '', tail: '', bytes: 0, newlines: 0, truncated: false },
  };
  if (confinement.mode === 'unavailable')
    return {
      ...none,
      truncated: false,
      processLimitHit: false,
      spawnError: new ConfinementUnavailableError(confinement.reason ?? '').message,
    };
  // A missing program — or one the command cannot see — is named as such (inside bwrap it would
  // be a bare exit status).
  if (confinement.mode === 'bubblewrap' && !(await confinement.locate(inv)))
    return { ...none, truncated: false, processLimitHit: false, spawnError: `spawn ${inv.program} ENOENT` };
  const cmd = await confinement.prepare(inv);
  let released: { processLimitHit: boolean };
  let r: ProcessResult;
  try {
    r = await runProcess({
      program: cmd.program,
      args: cmd.args,
      cwd: cmd.cwd,
      env: cmd.env,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      maxOutputBytes: confinement.limits.maxOutputBytes,
      input: opts.input,
      captureStdout: opts.captureStdout,
      onOutput: opts.onOutput,
    });
  } finally {
    released = await cmd.release();
  }
  return { ...r, processLimitHit: released.processLimitHit };
}

/** Keeps the head and the tail of a stream within a byte budget, counting what went by. */
class CappedOutput {
  readonly #half: number;
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #bytes = 0;
  #newlines = 0;
  truncated = false;

  constructor(max: number) {
    this.#half = Math.floor(max / 2);
  }

  push(b: Buffer): void {
    this.#bytes += b.length;
    for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) this.#newlines++;
    if (this.#headBytes < this.#half) {
      const take = b.subarray(0, this.#half - this.#headBytes);
      this.#head.push(take);
      this.#headBytes += take.length;
      b = b.subarray(take.length);
    }
    if (b.length === 0) return;
    this.#tail.push(b);
    this.#tailBytes += b.length;
    while (this.#tailBytes > this.#half) {
      const first = this.#tail[0];
      if (!first) break;
      const excess = this.#tailBytes - this.#half;
      this.truncated = true;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailBytes -= excess;
      }
    }
  }

  parts(): KeptOutput {
    const head = Buffer.concat(this.#head);
    const tail = Buffer.concat(this.#tail);
    const base = { bytes: this.#bytes, newlines: this.#newlines, truncated: this.truncated };
    if (!this.truncated) return { head: Buffer.concat([head, tail]).toString('utf8'), tail: '', ...base };
    // A cut can split a character: its pieces are dropped rather than shown as U+FFFD.
    return {
      head: head.toString('utf8').replace(/\uFFFD+$/, ''),
      tail: tail.toString('utf8').replace(/^\uFFFD+/, ''),
      ...base,
    };
  }

  text(): string {
    const p = this.parts();
    if (!p.truncated) return p.head;
    const cut = p.bytes - Buffer.byteLength(p.head) - Buffer.byteLength(p.tail);
    return `${p.head}\n… [output truncated: ${cut} bytes cut from the middle] …\n${p.tail}`;
  }
}

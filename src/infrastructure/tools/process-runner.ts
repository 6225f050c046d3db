/**
 * Runs a program (no shell) in its own process group, so a timeout or an abort kills everything it
 * started, not just the direct child. Output (stdout and stderr interleaved as they arrive) is
 * capped: the first and the last half megabyte are kept, and a program that goes on past the
 * output limit is killed.
 */
import { spawn } from 'node:child_process';
import { ConfinementUnavailableError, type CommandConfinement, type CommandInvocation } from './confinement.ts';

export const MAX_OUTPUT_BYTES = 1024 * 1024;
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
  output: string;
  truncated: boolean;
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
  const out = new CappedOutput(MAX_OUTPUT_BYTES);
  const stdoutOnly = req.captureStdout ? new CappedOutput(MAX_OUTPUT_BYTES) : undefined;
  if (req.signal.aborted)
    return Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: true,
      outputLimited: false,
      output: '',
      truncated: false,
    });
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let outputLimited = false;
    let produced = 0;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const child = spawn(req.program, [...req.args], {
      cwd: req.cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: req.env ?? commandEnv(),
    });
    // Without input stdin is at its end at once (as /dev/null would be). A program that exits
    // without reading its input closes the pipe: not an error of ours.
    child.stdin.on('error', () => {});
    child.stdin.end(req.input ?? '');
    const killGroup = (sig: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    const stop = (): void => {
      killGroup('SIGTERM');
      timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS));
    };
    const onAbort = (): void => {
      aborted = true;
      stop();
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    timers.push(
      setTimeout(() => {
        timedOut = true;
        stop();
      }, req.timeoutMs),
    );
    const onData = (b: Buffer): void => {
      out.push(b);
      produced += b.length;
      if (req.maxOutputBytes !== undefined && produced > req.maxOutputBytes && !outputLimited) {
        outputLimited = true;
        killGroup('SIGKILL');
      }
    };
    child.stdout.on('data', (b: Buffer) => {
      stdoutOnly?.push(b);
      onData(b);
    });
    child.stderr.on('data', onData);

    const finish = (
      r: Omit<ProcessResult, 'output' | 'truncated' | 'timedOut' | 'aborted' | 'outputLimited'>,
    ): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      req.signal.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        ...r,
        timedOut,
        aborted,
        outputLimited,
        output: out.text(),
        truncated: out.truncated,
        ...(stdoutOnly ? { stdout: stdoutOnly.text() } : {}),
      });
    };
    child.on('error', (e) => finish({ exitCode: null, signal: null, spawnError: e.message }));
    child.on('exit', (code, sig) => {
      // Whatever the program left running in its group (a background job) goes with it.
      killGroup('SIGKILL');
      let closed = false;
      const done = (): void => finish({ exitCode: timedOut || aborted || outputLimited ? null : code, signal: sig });
      child.on('close', () => {
        closed = true;
        done();
      });
      timers.push(setTimeout(() => closed || done(), DRAIN_MS));
    });
  });
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
  opts: Pick<ProcessRequest, 'timeoutMs' | 'signal' | 'input' | 'captureStdout'>,
): Promise<ConfinedResult> {
  const none = { exitCode: null, signal: null, timedOut: false, aborted: false, outputLimited: false, output: '' };
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
    });
  } finally {
    released = await cmd.release();
  }
  return { ...r, processLimitHit: released.processLimitHit };
}

/** Keeps the head and the tail of a stream within a byte budget. */
class CappedOutput {
  readonly #half: number;
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  truncated = false;

  constructor(max: number) {
    this.#half = Math.floor(max / 2);
  }

  push(b: Buffer): void {
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

  text(): string {
    const head = Buffer.concat(this.#head).toString('utf8');
    const tail = Buffer.concat(this.#tail).toString('utf8');
    return this.truncated ? `${head}\n… [output truncated] …\n${tail}` : head + tail;
  }
}

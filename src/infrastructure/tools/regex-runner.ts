/**
 * Runs a regex tool's matching (regex-scan.ts) in a worker thread with a deadline. Node's RegExp
 * has no timeout: `(a+)+$` on forty `a`s and a `b` backtracks for minutes, and on the agent's own
 * event loop that stops every request of every user of a server. In a worker it stops only the
 * worker, which is terminated when the pattern has spent PATTERN_DEADLINE_MS on one file, when the
 * call's own time limit is up, or when the call is cancelled; the call then fails saying which.
 */
import { Worker } from 'node:worker_threads';
import type { GrepJob, GrepScan, ReplaceScan, ScanJob, SearchJob, SearchScan } from './regex-scan.ts';
import type { WorkerReply, WorkerRequest } from './regex-worker.ts';
import { ToolFailure } from './tool-support.ts';

/** How long a pattern may take on one file (a sane pattern takes milliseconds on 5 MB). */
export const PATTERN_DEADLINE_MS = 10_000;
/**
 * The worker's heap: a pattern or a replacement that allocates without end fails the call instead
 * of taking the process down. Room for replace-in-files' changes (each file before and after).
 * Node enforces it at garbage collection, so one allocation larger than what is left aborts the
 * whole process (nodejs/node#47224): regex-scan.ts allocates nothing that size (replace-in-files
 * measures a replacement before it builds it).
 */
export const WORKER_HEAP_MB = 256;
/**
 * One worker is kept for the next call: starting one per call made a grep of 2,000 files
 * 80-130 ms slower (best of 11: 190-300 ms against 115-160 ms on the agent's own thread, on a
 * loaded 2-core machine); with a kept one the figures were those of the agent's thread.
 */
const MAX_IDLE = 1;
/**
 * A worker whose heap is larger than this after its job is not kept: an idle worker does not
 * collect its garbage (a replace across 2,000 files left 117 MB), so it is ended instead.
 */
const IDLE_HEAP_BYTES = 48 * 1024 * 1024;

/**
 * The worker's module beside this one: the bundle's own file inside the bundle (build/bundle.ts
 * builds it), else tsc's .js or, when Node runs the TypeScript sources (the tests), the .ts.
 */
const HERE = new URL('.', import.meta.url);
const WORKER_URL = HERE.pathname.endsWith('/bundle/')
  ? new URL('regex-worker.js', HERE)
  : new URL(import.meta.url.endsWith('.ts') ? './regex-worker.ts' : './regex-worker.js', import.meta.url);

const idle: Worker[] = [];

type ResultOf<J extends ScanJob> = J extends GrepJob ? GrepScan : J extends SearchJob ? SearchScan : ReplaceScan;

export interface ScanLimits {
  signal: AbortSignal;
  /** The call's time limit: the whole scan stops there, whatever the per-file deadline. */
  timeoutMs: number;
}

const ADVICE = 'simplify it (nested quantifiers like (a+)+ backtrack exponentially)';

/** `10 s`, `1.5 s`, `300 ms`. */
const duration = (ms: number): string => (ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`);

/**
 * The job's result, computed in a worker. Fails with a ToolFailure on the deadline, on
 * cancellation and when the worker runs out of memory; with a plain Error when reading a file
 * failed (as the tools did on their own thread).
 */
export function runScan<J extends ScanJob>(job: J, { signal, timeoutMs }: ScanLimits): Promise<ResultOf<J>> {
  if (signal.aborted) return Promise.reject(new ToolFailure('cancelled'));
  const progress = new SharedArrayBuffer(4);
  const current = new Int32Array(progress);
  Atomics.store(current, 0, -1);
  const fileAt = (i: number): string => job.files[i]?.rel ?? 'the first file';
  const worker = idle.pop() ?? spawn();
  worker.ref();

  return new Promise<ResultOf<J>>((resolve, reject) => {
    const clock = new ScanClock(performance.now(), timeoutMs, fileAt);
    let settled = false;
    const finish = (outcome: { result: ResultOf<J> } | { error: Error }, reuse: boolean): void => {
      if (settled) return;
      settled = true;
      clearInterval(watchdog);
      signal.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      worker.unref();
      if (reuse) void keepOrEnd(worker);
      else void worker.terminate();
      if ('result' in outcome) resolve(outcome.result);
      else reject(outcome.error);
    };
    const onMessage = (reply: WorkerReply): void => {
      if (reply.ok) finish({ result: reply.result as ResultOf<J> }, true);
      else finish({ error: reply.refused ? new ToolFailure(reply.message) : new Error(reply.message) }, true);
    };
    const onError = (e: Error & { code?: string }): void =>
      finish({ error: workerFailure(e, fileAt(Atomics.load(current, 0))) }, false);
    const onExit = (code: number): void =>
      finish({ error: new Error(`the matching worker exited (code ${code}) before it answered`) }, false);
    const onAbort = (): void => finish({ error: new ToolFailure('cancelled') }, false);
    // Polls the file index the worker publishes: a message could not arrive while the worker is
    // stuck in a match, and the main thread is the one that must notice.
    const watchdog = setInterval(
      () => {
        const late = clock.overdue(Atomics.load(current, 0), performance.now());
        if (late !== undefined) finish({ error: new ToolFailure(late) }, false);
      },
      Math.max(10, Math.min(250, Math.min(PATTERN_DEADLINE_MS, timeoutMs) / 20)),
    );
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.postMessage({ job, progress } satisfies WorkerRequest);
  });
}

/** The worker died: out of memory (the pattern's or the files' doing), or something else. */
function workerFailure(e: Error & { code?: string }, at: string): Error {
  return e.code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? new ToolFailure(
        `matching needed more than ${WORKER_HEAP_MB} MB of memory (at ${at}); simplify the pattern or search fewer files`,
      )
    : new Error(`the matching worker failed at ${at}: ${e.message}`);
}

/** How long the scan has been at its current file, and since matching began; says when it is overdue. */
class ScanClock {
  private readonly started: number;
  private readonly timeoutMs: number;
  private readonly fileAt: (i: number) => string;
  private seen = -1;
  private since: number;
  private matching: number;

  constructor(started: number, timeoutMs: number, fileAt: (i: number) => string) {
    this.started = started;
    this.timeoutMs = timeoutMs;
    this.fileAt = fileAt;
    this.since = started;
    this.matching = started;
  }

  /** The failure's message once a deadline has passed, with the worker at file index `at` (-1: not started). */
  overdue(at: number, now: number): string | undefined {
    if (at !== this.seen) {
      if (this.seen < 0) this.matching = now;
      this.seen = at;
      this.since = now;
    }
    const { timeoutMs, fileAt } = this;
    if (now - this.since >= PATTERN_DEADLINE_MS)
      return `the pattern took longer than ${duration(PATTERN_DEADLINE_MS)} on ${fileAt(at)}; ${ADVICE}`;
    if (now - this.started < timeoutMs) return undefined;
    // The call's own limit came first; the pattern is to blame when one file took most of the
    // matching time (the worker's start is not the pattern's doing).
    if (at >= 0 && now - this.since >= (now - this.matching) / 2)
      return `the pattern took longer than the call's time limit of ${duration(timeoutMs)} on ${fileAt(at)}; ${ADVICE}`;
    return `the search took longer than the call's time limit of ${duration(timeoutMs)} (at ${fileAt(at)}); narrow the path or the files searched, or simplify the pattern`;
  }
}

/** Keeps a worker that answered for the next call, if there is room and its heap is small. */
async function keepOrEnd(w: Worker): Promise<void> {
  // getHeapStatistics is Node 22.16+; without it a worker is not kept (one per call, as before).
  const heap = idle.length < MAX_IDLE ? await w.getHeapStatistics?.().catch(() => undefined) : undefined;
  if (heap !== undefined && heap.used_heap_size <= IDLE_HEAP_BYTES && idle.length < MAX_IDLE) idle.push(w);
  else await w.terminate();
}

function spawn(): Worker {
  // No execArgv: the worker needs none of the process's flags (the tests' loader hook included).
  const w = new Worker(WORKER_URL, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  // An idle worker that dies (it should not) is simply not reused.
  w.on('exit', () => {
    const i = idle.indexOf(w);
    if (i >= 0) idle.splice(i, 1);
  });
  w.on('error', () => undefined);
  return w;
}

/**
 * The worker thread that runs a model's regular expression (regex-scan.ts) so that a backtracking
 * pattern blocks only this thread, which the agent terminates at its deadline (regex-runner.ts).
 * It imports nothing but node: builtins and regex-scan.ts: the bundle builds it as a file of its
 * own (build/bundle.ts).
 */
import { parentPort } from 'node:worker_threads';
import { scan, ScanRefusal, type ScanJob, type ScanResult } from './regex-scan.ts';

/** One job per message; the worker stays for the next (the runner keeps one warm). */
export interface WorkerRequest {
  job: ScanJob;
  /** One Int32: the index of the file being matched, for the runner's watchdog. */
  progress: SharedArrayBuffer;
}
export type WorkerReply =
  | { ok: true; result: ScanResult }
  /** `refused`: the job's own limit, not a failure to read (the runner answers with the message). */
  | { ok: false; message: string; at: number; refused: boolean };

if (parentPort) {
  const port = parentPort;
  port.on('message', ({ job, progress }: WorkerRequest) => {
    const current = new Int32Array(progress);
    let at = -1;
    const reply = (r: WorkerReply): void => port.postMessage(r);
    scan(job, (i) => {
      at = i;
      Atomics.store(current, 0, i);
    }).then(
      (result) => reply({ ok: true, result }),
      (e: unknown) =>
        reply({
          ok: false,
          message: e instanceof Error ? e.message : String(e),
          at,
          refused: e instanceof ScanRefusal,
        }),
    );
  });
}

import { A2AClientError, cancelTask, type A2AClient, type Task } from '../../../protocol/client/index.ts';

/** How long a cancel waits for the agent to confirm it and end the turn's request (a few seconds). */
export const CANCEL_WAIT_MS = 5_000;

/** What a cancel came to: the task as the agent canceled it, or why that is not known. */
export type CancelOutcome =
  | { kind: 'canceled'; task: Task }
  /** The turn ended before the cancel reached it: its request ends with the state it reached. */
  | { kind: 'ended' }
  /** The agent refused the cancel, did not answer within the wait, or could not be reached. */
  | { kind: 'unconfirmed'; taskId: string | undefined; problem: unknown };

export interface TurnCancelOptions {
  waitMs?: number;
  /**
   * Finds the turn's task when its request names none before it ends (a blocking SendMessage).
   * Without it, the cancel waits for {@link TurnCancel.know}.
   */
  findTask?: (signal: AbortSignal) => Promise<string | undefined>;
}

/**
 * One running turn's cancel (Ctrl-C, Esc): CancelTask for its task — at once, or as soon as the
 * turn's task is known — then a bounded wait for the turn's own request to end with the canceled
 * task. Aborting that request is no cancel: over stdio it only stops the stream (`$/cancelRequest`),
 * over HTTP it closes the connection, and the model goes on (and is billed) either way. So the
 * request listens to {@link signal}, which is aborted only when waiting is over: the wait ran out,
 * the cancel failed, or {@link abandon} (a second Ctrl-C).
 */
export class TurnCancel {
  /** What the cancel came to; undefined until it is settled (or when none was asked for). */
  outcome: CancelOutcome | undefined;

  private readonly request = new AbortController();
  private taskId: string | undefined;
  private settleKnown: ((id: string | undefined) => void) | undefined;
  private readonly known = new Promise<string | undefined>((resolve) => (this.settleKnown = resolve));
  private cancelling: Promise<CancelOutcome> | undefined;

  private readonly client: A2AClient;
  private readonly opts: TurnCancelOptions;

  constructor(client: A2AClient, opts: TurnCancelOptions = {}) {
    this.client = client;
    this.opts = opts;
  }

  /** The turn's request signal: aborted when the client stops waiting for it. */
  get signal(): AbortSignal {
    return this.request.signal;
  }

  /** Whether a cancel was asked for. */
  get requested(): boolean {
    return this.cancelling !== undefined;
  }

  /** The turn's task, as soon as the agent names it (a stream's first event). */
  know(taskId: string): void {
    if (this.taskId !== undefined) return;
    this.taskId = taskId;
    this.settleKnown?.(taskId);
  }

  /** The turn's request ended: a cancel still waiting for its task has none to cancel. */
  ended(): void {
    this.settleKnown?.(undefined);
  }

  /** Cancels the turn's task (once; later calls get the same outcome). */
  cancel(): Promise<CancelOutcome> {
    return (this.cancelling ??= this.run());
  }

  /** Stops waiting now, whatever the agent is doing (a second Ctrl-C). */
  abandon(): void {
    this.request.abort(new Error('stopped waiting for the turn'));
  }

  private async run(): Promise<CancelOutcome> {
    const waitMs = this.opts.waitMs ?? CANCEL_WAIT_MS;
    const late = new Error(`the agent did not confirm the cancel within ${Math.ceil(waitMs / 1000)} s`);
    const deadline = AbortSignal.timeout(waitMs);
    const giveUp = (): void => this.request.abort(late);
    // Bounds the whole wait: finding the task, the cancel's answer, and the turn's request ending.
    deadline.addEventListener('abort', giveUp, { once: true });
    // Abandoned (a second Ctrl-C), the cancel stops waiting too.
    const wait = AbortSignal.any([deadline, this.request.signal]);
    let taskId = this.taskId;
    try {
      taskId ??= await this.findTask(wait);
      if (taskId === undefined) return (this.outcome = { kind: 'ended' });
      const task = await this.client.call(cancelTask, { id: taskId }, { signal: wait });
      return (this.outcome = { kind: 'canceled', task });
    } catch (err) {
      // Already terminal: the turn finished first, and its request ends with how.
      if (err instanceof A2AClientError && err.reason === 'TASK_NOT_CANCELABLE')
        return (this.outcome = { kind: 'ended' });
      const problem: unknown = deadline.aborted ? late : this.request.signal.aborted ? this.request.signal.reason : err;
      giveUp();
      return (this.outcome = { kind: 'unconfirmed', taskId, problem });
    }
  }

  private findTask(wait: AbortSignal): Promise<string | undefined> {
    const over = new Promise<never>((_, reject) =>
      wait.addEventListener('abort', () => reject(wait.reason as Error), { once: true }),
    );
    const found = this.opts.findTask?.(wait).then((id) => {
      if (id !== undefined) this.know(id);
      return id;
    });
    return Promise.race([this.known, over, ...(found ? [found] : [])]);
  }
}

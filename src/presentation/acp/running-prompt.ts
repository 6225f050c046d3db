/** A prompt an ACP session runs, and how it is cancelled: its A2A task, or the plan phase it runs. */
import { cancelTask, type A2AClient } from '../../protocol/client/index.ts';

/** The prompt a session is running: its task, once known, and how to cancel it. */
export class RunningPrompt {
  /** Aborted when the prompt is cancelled (a pending permission request is withdrawn). */
  readonly cancelling = new AbortController();
  /** Aborted when the backend could not cancel the task: the stream is dropped instead. */
  readonly drop = new AbortController();
  private taskId: string | undefined;
  private cancelled: Promise<void> | undefined;
  /** How a running plan phase is cancelled (plan/cancel) instead of its task. */
  private cancelPlan: (() => Promise<unknown>) | undefined;

  private readonly client: A2AClient;

  constructor(client: A2AClient) {
    this.client = client;
  }

  get isCancelled(): boolean {
    return this.cancelling.signal.aborted;
  }

  /** The task the stream reports; a cancel asked for before it was known is sent now. */
  started(taskId: string): void {
    if (this.taskId === taskId) return;
    this.taskId = taskId;
    if (this.isCancelled) void this.cancelTask();
  }

  /** A plan phase runs: a cancel cancels the plan. */
  cancelBy(cancel: () => Promise<unknown>): void {
    this.cancelPlan = cancel;
    if (this.isCancelled) void this.cancel();
  }

  /** Cancels the A2A task, or the plan (once); its stream then ends `canceled`. */
  cancel(): Promise<void> {
    this.cancelling.abort();
    const plan = this.cancelPlan;
    if (plan)
      return (this.cancelled ??= plan().then(
        () => undefined,
        () => this.drop.abort(),
      ));
    return this.taskId ? this.cancelTask() : Promise.resolve();
  }

  private cancelTask(): Promise<void> {
    const id = this.taskId ?? '';
    return (this.cancelled ??= this.client.call(cancelTask, { id }).then(
      () => undefined,
      () => this.drop.abort(),
    ));
  }
}

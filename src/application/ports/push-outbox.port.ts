/** One push delivery not yet acknowledged by its webhook. */
export interface OutboxEntry {
  taskId: string;
  configId: string;
  /** The task event's sequence number: deliveries of one config go out in this order. */
  seq: number;
  /** The JSON body (an A2A StreamResponse). */
  payload: string;
  attempts: number;
  /** Not before this instant (ISO 8601). */
  nextAttemptAt: string;
  lastError?: string | null | undefined;
}

/** A config with deliveries pending. */
export interface OutboxTarget {
  taskId: string;
  configId: string;
}

/**
 * The durable push outbox: deliveries are stored before they are attempted and removed once
 * delivered (or given up), so a restart resumes what was pending — at least once, in order per
 * config. Each entry belongs to the runner (process) that queued it; entries of a runner that
 * stopped are taken over by {@link claim}.
 */
export interface PushOutbox {
  /**
   * True when the task store queues each event's deliveries in the event's own write (PostgreSQL:
   * TaskRepository.append), so a stored event always has them; {@link enqueue} is then not asked
   * for task events.
   */
  readonly queuedWithEvents?: boolean;
  /** Queues deliveries for this process's runner (one write, in the current group commit). */
  enqueue(
    entries: ReadonlyArray<Pick<OutboxEntry, 'taskId' | 'configId' | 'seq' | 'payload'>>,
    at: string,
  ): Promise<void>;
  /** The config's first pending delivery (lowest seq). */
  next(target: OutboxTarget): Promise<OutboxEntry | undefined>;
  /** Removes a delivery (delivered, refused for good, or given up). */
  remove(target: OutboxTarget, seq: number): Promise<void>;
  /** Records a failed attempt and when to try again. */
  retryLater(
    target: OutboxTarget,
    seq: number,
    attempts: number,
    nextAttemptAt: string,
    lastError: string,
  ): Promise<void>;
  /** Removes every pending delivery of a config (it was deleted). */
  removeTarget(target: OutboxTarget): Promise<void>;
  /**
   * Takes over the entries of runners that are not live (`isLive`), due at `at`, and returns
   * every target with entries of this process's runner.
   */
  claim(isLive: (runnerId: string | null) => Promise<boolean>, at: string): Promise<OutboxTarget[]>;
}

import type BetterSqlite3 from 'better-sqlite3';

interface PendingWrite {
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Writes that share one transaction per turn of the event loop. A commit costs far more than a
 * statement here (WAL frames go out one system call at a time), so writes queue until the next
 * check phase and commit together in one IMMEDIATE transaction; each resolves (or rejects) only
 * once that commit is done. See {@link SqliteDatabase.write}.
 */
export class GroupCommit {
  private pending: PendingWrite[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly commit: (batch: PendingWrite[], outcomes: Outcome[]) => void;

  constructor(
    sqlite: BetterSqlite3.Database,
    /** Runs synchronous work while holding the connection (SqliteDatabase.exclusive). */
    private readonly exclusive: (fn: () => void) => Promise<void>,
    /** What a caller sees of a storage failure (see StorageFailures). */
    private readonly mapError: (err: unknown) => unknown = (err) => err,
  ) {
    const all = sqlite.transaction((batch: PendingWrite[], outcomes: Outcome[]) => {
      for (const w of batch) {
        try {
          outcomes.push({ ok: true, value: w.fn() });
        } catch (error) {
          // A failed statement is undone on its own and the transaction goes on; but some errors
          // (I/O, full disk) make SQLite roll the whole transaction back: then every write fails.
          if (!sqlite.inTransaction) throw error;
          outcomes.push({ ok: false, error });
        }
      }
    });
    this.commit = (batch, outcomes) => all.immediate(batch, outcomes);
  }

  /** Queues `fn` for the next group commit. */
  add<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve, reject });
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
  }

  /** Commits what is queued now (and resolves when done); writes queued meanwhile join in. */
  flush(): Promise<void> {
    if (this.pending.length === 0) return Promise.resolve();
    const done = this.exclusive(() => {
      const batch = this.pending;
      this.pending = [];
      const outcomes: Outcome[] = [];
      try {
        this.commit(batch, outcomes);
      } catch (err) {
        // The whole transaction failed (a lock, a full disk…) and is rolled back: every write of
        // the group fails with the same error, logged once. The next group starts afresh.
        const mapped = this.safeMap(err);
        for (const w of batch) w.reject(mapped);
        return;
      }
      // Writes that failed on their own in a committed group: storage errors mapped (and logged)
      // once per distinct error, constraint errors left for the repository to interpret.
      const seen = new Map<unknown, unknown>();
      batch.forEach((w, i) => {
        const o = outcomes[i];
        if (o?.ok) return w.resolve(o.value);
        const error = o ? o.error : new Error('group commit lost a write');
        if (!seen.has(error)) seen.set(error, this.safeMap(error));
        w.reject(seen.get(error));
      });
    });
    this.flushing = done.catch((err: unknown) => {
      // The lock itself failed (e.g. the database is being closed): nothing ran.
      const batch = this.pending;
      this.pending = [];
      for (const w of batch) w.reject(err);
    });
    return this.flushing;
  }

  /** Every write of a group must settle, even if reporting its failure fails (e.g. the log). */
  private safeMap(err: unknown): unknown {
    try {
      return this.mapError(err);
    } catch {
      return err;
    }
  }

  /** Waits until everything queued so far is committed (or failed). */
  async drain(): Promise<void> {
    await this.flushing;
    await this.flush();
  }
}

import type BetterSqlite3 from 'better-sqlite3';

interface PendingWrite {
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Work a write leaves for the end of its group: run before the commit, or discarded with a failed group. */
export interface GroupEndHook {
  run(): void;
  discard(): void;
}

/**
 * Writes that share one transaction per turn of the event loop. A commit costs far more than a
 * statement here (WAL frames go out one system call at a time), so writes queue until the next
 * check phase and commit together in one IMMEDIATE transaction; each resolves (or rejects) only
 * once that commit is done. See {@link SqliteDatabase.write}.
 */
export class GroupCommit {
  private pending: PendingWrite[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private hooks: GroupEndHook[] = [];
  private running = false;
  private readonly commit: (batch: PendingWrite[], outcomes: Outcome[]) => void;

  /** Runs synchronous work while holding the connection (SqliteDatabase.exclusive). */
  private readonly exclusive: (fn: () => void) => Promise<void>;
  /** What a caller sees of a storage failure (see StorageFailures). */
  private readonly mapError: (err: unknown) => unknown;

  constructor(
    sqlite: BetterSqlite3.Database,
    exclusive: (fn: () => void) => Promise<void>,
    mapError: (err: unknown) => unknown = (err) => err,
  ) {
    this.exclusive = exclusive;
    this.mapError = mapError;
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
      // Deferred work of the writes above, in the same transaction; if it fails, the whole group does.
      for (const h of this.hooks) h.run();
      this.hooks = [];
    });
    this.commit = (batch, outcomes) => {
      this.running = true;
      try {
        all.immediate(batch, outcomes);
      } catch (err) {
        // Rolled back: what the writes left for the end of the group goes with them.
        const hooks = this.hooks;
        this.hooks = [];
        for (const h of hooks) h.discard();
        throw err;
      } finally {
        this.running = false;
      }
    };
  }

  /**
   * From inside a write of the running group: `hook` runs after the group's last write, before its
   * commit (see {@link CoalescedUpdates}).
   */
  atGroupEnd(hook: GroupEndHook): void {
    if (!this.running) throw new Error('atGroupEnd outside a group commit');
    this.hooks.push(hook);
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

/**
 * Updates of one row that a group commit folds into one statement per row: a write adds its update
 * (merged with the one queued before it for the same key), and the merged update runs once, after
 * the group's last write and before its commit. Nothing reads the database in between (a group runs
 * synchronously, holding the connection), so only the statements differ, never what is committed.
 * A write that touches the same rows in some other way first calls {@link flush} (or {@link drop},
 * when it replaces what is queued).
 */
export class CoalescedUpdates<V> implements GroupEndHook {
  private readonly pending = new Map<string, V>();

  private readonly group: { atGroupEnd(hook: GroupEndHook): void };
  private readonly merge: (queued: V, next: V) => V;
  private readonly apply: (key: string, update: V) => void;

  constructor(
    group: { atGroupEnd(hook: GroupEndHook): void },
    merge: (queued: V, next: V) => V,
    apply: (key: string, update: V) => void,
  ) {
    this.group = group;
    this.merge = merge;
    this.apply = apply;
  }

  /** From inside a write: queues `update` of `key` for the end of the group. */
  add(key: string, update: V): void {
    if (this.pending.size === 0) this.group.atGroupEnd(this);
    const queued = this.pending.get(key);
    this.pending.set(key, queued === undefined ? update : this.merge(queued, update));
  }

  /** Forgets the update queued for `key` (a write that sets all it would have set). */
  drop(key: string): void {
    this.pending.delete(key);
  }

  /** Runs what is queued now: all of it, or only the update of `key`. */
  flush(key?: string): void {
    if (key !== undefined) {
      const update = this.pending.get(key);
      if (update === undefined) return;
      this.pending.delete(key);
      this.apply(key, update);
      return;
    }
    for (const [k, update] of this.pending) {
      this.pending.delete(k);
      this.apply(k, update);
    }
  }

  run(): void {
    this.flush();
  }

  discard(): void {
    this.pending.clear();
  }
}

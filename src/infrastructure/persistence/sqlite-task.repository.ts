import type { Task, TaskEvent } from '../../domain/a2a.model.ts';
import type {
  MessageKey,
  MessageKeyHit,
  RunningTask,
  StoredPushConfig,
  StoredTask,
  StoredTaskView,
  TaskExpiry,
  TaskListQuery,
  TaskRef,
  TaskPage,
  TaskRepository,
} from '../../application/index.ts';
import { isConstraintError } from './storage-failures.ts';
import type { SqliteDatabase } from './database.ts';
import { expiryStatements, taskStatements } from './sqlite-task.statements.ts';
import { CoalescedUpdates } from './group-commit.ts';
import {
  appendValues,
  expiryPlan,
  listQueries,
  messageKeyTaken,
  newTaskValues,
  pickExpired,
  seqTaken,
  snapshotValues,
  taskExists,
  taskNotFound,
  writeFenced,
  firstMessagesOf,
  firstTasksQuery,
  refsByIdPrefixQuery,
  toStoredTask,
  toTaskView,
  toTaskPage,
  toEvent,
  type AppendValues,
  type EventRow,
  type ExpiredRow,
  type TaskRow,
} from './rows/task.rows.ts';

export interface SqliteTaskRepositoryOptions {
  /** The runner (process lease) this process runs turns under; stored with the tasks it runs. */
  runnerId?: string | undefined;
}

/**
 * Tasks in SQLite: one row per task holding its latest snapshot, plus the append-only event log.
 * Reads run synchronously under {@link SqliteDatabase.exclusive} and writes in its group commits
 * ({@link SqliteDatabase.write}), so multi-statement reads and writes are consistent; the hot
 * statements are compiled and prepared once.
 */
export class SqliteTaskRepository implements TaskRepository {
  private readonly q;
  private readonly deleteContext;
  private readonly readTask;
  private readonly expire;
  private readonly statuses: CoalescedUpdates<{ state: string; updatedAt: string }>;
  private readonly runnerId: string | null;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase, opts: SqliteTaskRepositoryOptions = {}) {
    this.db = db;
    this.runnerId = opts.runnerId ?? null;
    this.q = taskStatements(db);
    const q = this.q;
    // A plain progress status only moves the listing columns (state, updated_at), and a task's
    // next status or snapshot often lands in the same group commit (a turn's events are stored in
    // bursts): its row and three of its indexes are then rewritten once per group, with the last
    // status, instead of once per event. A snapshot sets those columns itself and replaces what is
    // queued; anything else that reads or deletes task rows in a group runs the queue first.
    this.statuses = new CoalescedUpdates(
      db,
      (_queued, next) => next,
      // No row: the task was deleted later in the same group, its events with it.
      (id, { state, updatedAt }) => q.writeStatus.run({ id, state, updatedAt }),
    );
    this.deleteContext = db.sqlite.transaction((contextId: string): number => {
      for (const { owner, n } of q.ownersInContext.all({ contextId })) {
        q.bumpCount.run({ owner, scope: '', added: -n });
        q.dropCount.run({ owner, scope: contextId });
      }
      for (const children of q.deleteChildren) children.run({ contextId });
      return q.deleteTasks.run({ contextId });
    });
    this.expire = expiryStatements(db);
    // The row and its later events from one read snapshot (other processes may write), as two
    // statements in one transaction: SQLite 3.54 runs the single LEFT JOIN that did this ~2× slower
    // (19.6 vs 9.9 µs a read, 200 tasks; half of stdio GetTask's CPU in a profile).
    const read = db.sqlite.transaction((taskId: string): [TaskRow, EventRow[]] | undefined => {
      const row = q.selectTask.get({ id: taskId });
      return row ? [row, q.eventsAfter.all({ id: taskId, afterSeq: row.seq })] : undefined;
    });
    this.readTask = <T>(taskId: string, as: (row: TaskRow, events: EventRow[]) => T): T | undefined => {
      const found = read(taskId);
      return found && as(found[0], found[1]);
    };
  }

  // The write pairs (here, in createWithCounts and in claimSnapshot) run inside a group commit (SqliteDatabase.write), which makes them one
  // transaction with the rest of the group. Only their first statement can fail on its own (a
  // duplicate key, or the task missing under the foreign key), before the second has run, so
  // they need no savepoint of their own: a savepoint pair per event was a visible cost.
  private appendWithTask(p: AppendValues): void {
    const q = this.q;
    if ((p.runnerId === undefined ? q.insertEvent : q.insertFencedEvent).run(p) === 0) {
      // Refused by its guard (rare): the task is gone, or the write was fenced off.
      throw q.selectTask.get({ id: p.id }) ? writeFenced(p.id, p.seq) : taskNotFound(p.id);
    }
    const { id, state, updatedAt } = p;
    if (state === undefined || updatedAt === undefined) return;
    if (p.snapshot === undefined) {
      // The event's insert has just found the task's row (foreign key), so the update will too.
      this.statuses.add(id, { state, updatedAt });
      return;
    }
    this.statuses.drop(id);
    if (q.writeSnapshot.run(p) === 0) {
      // Unreachable while foreign keys are enforced; undone by hand all the same.
      q.deleteEvent.run(p);
      throw taskNotFound(id);
    }
  }

  // The task row carries its message key, under a unique index: its insert is the statement that
  // can conflict (a concurrent send of the same message), and then nothing else has run.
  private createWithCounts(
    p: { owner: string; contextId: string; messageId: string | null } & Record<string, unknown>,
    push: StoredPushConfig | undefined,
  ): void {
    const q = this.q;
    try {
      q.insertTask.run(p);
    } catch (err) {
      if (p.messageId !== null && isConstraintError(err, 'UNIQUE')) throw messageKeyTaken(p.messageId);
      throw err;
    }
    q.bumpCount.run({ owner: p.owner, scope: '', added: 1 });
    q.bumpCount.run({ owner: p.owner, scope: p.contextId, added: 1 });
    // After the row it refers to, in the same transaction (the group commit).
    if (push) q.insertPush.run({ taskId: push.taskId, configId: push.id, config: JSON.stringify(push) });
  }

  private insertKey(key: MessageKey, taskId: string): void {
    try {
      this.q.insertKey.run({ ...key, id: taskId });
    } catch (err) {
      if (isConstraintError(err, 'PRIMARYKEY')) throw messageKeyTaken(key.messageId);
      if (isConstraintError(err, 'FOREIGNKEY')) throw taskNotFound(taskId);
      throw err;
    }
  }

  private claimSnapshot(p: Record<string, unknown>, key: MessageKey | undefined): number {
    const q = this.q;
    if (key) this.insertKey(key, String(p.id));
    const changed = q.claimSnapshot.run(p);
    if (changed === 0 && key) q.deleteKey.run({ ...key });
    else this.statuses.drop(String(p.id));
    return changed;
  }

  async create(
    task: Task,
    owner: string,
    key?: MessageKey,
    push?: StoredPushConfig,
    startedBy?: string,
  ): Promise<void> {
    const params = newTaskValues(task, owner, key, this.runnerId, startedBy);
    const config = push && { ...push, taskId: task.id };
    try {
      await this.db.write(() => this.createWithCounts(params, config));
    } catch (err) {
      if (isConstraintError(err, 'PRIMARYKEY')) throw taskExists(task.id);
      throw err;
    }
  }

  async get(id: string): Promise<StoredTask | undefined> {
    return this.db.exclusive(() => this.readTask(id, toStoredTask));
  }

  async getView(id: string): Promise<StoredTaskView | StoredTask | undefined> {
    return this.db.exclusive(() => this.readTask(id, toTaskView));
  }

  async append(taskId: string, event: TaskEvent, snapshot?: Task, eventJson?: string, fenced = false): Promise<void> {
    const params = appendValues(taskId, event, snapshot, eventJson);
    // Without a runner of its own (a bare repository) there is nothing to fence a turn by.
    if (fenced && this.runnerId !== null) params.runnerId = this.runnerId;
    try {
      await this.db.write(() => this.appendWithTask(params));
    } catch (err) {
      if (isConstraintError(err, 'FOREIGNKEY')) throw taskNotFound(taskId);
      if (isConstraintError(err, 'PRIMARYKEY')) throw seqTaken(taskId, event.seq);
      throw err;
    }
  }

  async findMessageKey(owner: string, messageId: string): Promise<MessageKeyHit | undefined> {
    const row = await this.db.exclusive(() => this.q.selectKey.get({ owner, messageId }));
    // message_hash is set whenever message_id is, and only rows with a message_id match.
    return row && { taskId: row.task_id, hash: row.hash ?? '' };
  }

  async listRunning(): Promise<RunningTask[]> {
    const rows = await this.db.exclusive(() =>
      this.db.sqlite.transaction(() => this.q.owners.all().flatMap(({ owner }) => this.q.running.all({ owner })))(),
    );
    return rows.map((r) => ({ id: r.id, owner: r.owner, runnerId: r.runner_id ?? '' }));
  }

  async endTurn(taskId: string): Promise<void> {
    const runnerId = this.runnerId;
    if (runnerId === null) return;
    await this.db.write(() => this.q.endTurn.run({ id: taskId, runnerId }));
  }

  async saveSnapshot(task: Task, seq: number, key?: MessageKey, startedBy?: string): Promise<void> {
    const params = snapshotValues(task, seq, this.runnerId, startedBy);
    const changed = await this.db.write(() => this.claimSnapshot(params, key));
    if (changed === 0) throw taskNotFound(task.id);
  }

  async eventsAfter(taskId: string, afterSeq: number): Promise<TaskEvent[]> {
    return this.db.exclusive(() => this.q.eventsAfter.all({ id: taskId, afterSeq }).map(toEvent));
  }

  /** Changes when another connection (another process) commits; our own writes leave it alone. */
  async logVersion(): Promise<number> {
    return this.db.exclusive(() => this.db.sqlite.pragma('data_version', { simple: true }) as number);
  }

  async list(query: TaskListQuery): Promise<TaskPage> {
    const { limit, count, page } = listQueries(this.db.kysely, query);
    const countQuery = count.compile();
    const pageQuery = page.compile();
    return this.db.exclusive(() =>
      this.db.sqlite.transaction(() => {
        const total = this.db.all(countQuery)[0]?.n ?? 0;
        return toTaskPage(this.db.all(pageQuery), limit, total, (r) => this.materialise(r));
      })(),
    );
  }

  async deleteByContext(contextId: string): Promise<number> {
    return this.db.write(() => {
      // Outside the deletion's savepoint: what it runs stays run if the deletion is undone.
      this.statuses.flush();
      return this.deleteContext.immediate(contextId);
    });
  }

  async countByContext(contextId: string): Promise<number> {
    return this.db.exclusive(() => this.q.countContext.get({ contextId })?.n ?? 0);
  }

  async deleteExpired(expiry: TaskExpiry): Promise<number> {
    const x = this.expire;
    const plan = expiryPlan(expiry);
    if (!plan) return 0;
    const { before, keep, want } = plan;
    // One transaction: what is chosen is what is deleted, and a task cannot turn live in between.
    return this.db.write(() => {
      this.statuses.flush();
      const candidates: ExpiredRow[][] = [];
      if (before !== undefined) candidates.push(x.olderThan.all({ before, limit: want }) as ExpiredRow[]);
      if (keep !== undefined) {
        const excess = (x.countTerminal.get() as { n: number }).n - keep;
        if (excess > 0) candidates.push(x.oldest.all({ limit: Math.min(excess, want) }) as ExpiredRow[]);
      }
      const picked = pickExpired(candidates, plan.limit, (id) => expiry.isLive(id));
      for (const r of picked) this.removeTask(r);
      return picked.length;
    });
  }

  /**
   * The one path that deletes a single task: its push configs, events, row and its share of the
   * maintained counts (a table keyed by task adds its own delete here).
   */
  private removeTask(r: ExpiredRow): void {
    const x = this.expire;
    x.deletePush.run({ id: r.id });
    x.deleteEvents.run({ id: r.id });
    x.deleteTranscript.run({ id: r.id });
    if (x.deleteTask.run({ id: r.id }).changes === 0) return;
    this.q.bumpCount.run({ owner: r.owner, scope: '', added: -1 });
    this.q.bumpCount.run({ owner: r.owner, scope: r.context_id, added: -1 });
    x.dropEmptyCount.run({ owner: r.owner, scope: r.context_id });
  }

  async firstMessages(contextIds: readonly string[]): Promise<Map<string, string>> {
    if (contextIds.length === 0) return new Map();
    const query = firstTasksQuery(this.db.kysely, contextIds).compile();
    return firstMessagesOf(await this.db.exclusive(() => this.db.all(query)));
  }

  async refsByIdPrefix(owner: string, prefix: string, limit: number): Promise<TaskRef[]> {
    const query = refsByIdPrefixQuery(this.db.kysely, owner, prefix, limit).compile();
    return this.db.exclusive(() => this.db.all(query));
  }

  /** The newest `limit` tasks of a context, returned oldest first (the last turns of a chat). */
  async listByContext(contextId: string, limit: number): Promise<StoredTask[]> {
    const n = Math.max(0, Math.floor(limit));
    return this.db.exclusive(() =>
      this.db.sqlite.transaction(() =>
        this.q.byContext
          .all({ contextId, limit: n })
          .reverse()
          .map((r) => this.materialise(r)),
      )(),
    );
  }

  /** The snapshot with every event logged after it folded in (what a crash left unsnapshotted). */
  private materialise(row: TaskRow): StoredTask {
    return toStoredTask(row, this.q.eventsAfter.all({ id: row.id, afterSeq: row.seq }));
  }
}

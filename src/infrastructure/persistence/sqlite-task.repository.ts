import type { Task, TaskEvent } from '../../domain/a2a.model.ts';
import { sql } from 'kysely';
import type {
  MessageKey,
  MessageKeyHit,
  RunningTask,
  StoredTask,
  StoredTaskView,
  TaskExpiry,
  TaskListQuery,
  TaskPage,
  TaskRepository,
} from '../../application/index.ts';
import { isConstraintError, param, type SqliteDatabase } from './database.ts';
import { CoalescedUpdates } from './group-commit.ts';
import {
  appendValues,
  byContextQuery,
  countContextQuery,
  countOfQuery,
  eventsAfterQuery,
  expiryPlan,
  listQueries,
  messageKeyQuery,
  messageKeyTaken,
  newTaskValues,
  pickExpired,
  seqTaken,
  snapshotValues,
  taskExists,
  taskNotFound,
  TERMINAL_STATES,
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
  private readonly appendWithTask;
  private readonly createWithCounts;
  private readonly deleteContext;
  private readonly readTask;
  private readonly expire;
  private readonly claimSnapshot;
  private readonly statuses: CoalescedUpdates<{ state: string; updatedAt: string }>;
  private readonly runnerId: string | null;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase, opts: SqliteTaskRepositoryOptions = {}) {
    this.db = db;
    this.runnerId = opts.runnerId ?? null;
    const k = db.kysely;
    const id = param<string>('id');
    this.q = {
      insertTask: db.prepare(
        k.insertInto('tasks').values({
          id,
          context_id: param('contextId'),
          owner: param('owner'),
          state: param('state'),
          created_at: param('createdAt'),
          updated_at: param('updatedAt'),
          seq: param('seq'),
          snapshot: param('snapshot'),
          runner_id: param('runnerId'),
          message_id: param('messageId'),
          message_hash: param('hash'),
        }),
      ),
      insertKey: db.prepare(
        k
          .insertInto('message_keys')
          .values({ owner: param('owner'), message_id: param('messageId'), task_id: id, hash: param('hash') }),
      ),
      deleteKey: db.prepare(
        k
          .deleteFrom('message_keys')
          .where('owner', '=', param<string>('owner'))
          .where('message_id', '=', param<string>('messageId')),
      ),
      selectKey: db.prepare(messageKeyQuery(k, param('owner'), param('messageId'))),
      // Per owner, through tasks_owner_state_updated (literal states, so the plan is fixed).
      owners: db.prepare(k.selectFrom('task_counts').select('owner').where('context_id', '=', sql.lit(''))),
      running: db.prepare(
        k
          .selectFrom('tasks')
          .select(['id', 'owner', 'runner_id'])
          .where('owner', '=', param<string>('owner'))
          .where('state', 'in', [sql.lit('TASK_STATE_SUBMITTED'), sql.lit('TASK_STATE_WORKING')])
          .where(sql.ref('runner_id'), 'is not', sql.lit(null)),
      ),
      endTurn: db.prepare(
        k
          .updateTable('tasks')
          .set({ runner_id: sql.lit(null) })
          .where('id', '=', id)
          .where('runner_id', '=', param<string>('runnerId')),
      ),
      claimSnapshot: db.prepare(
        k
          .updateTable('tasks')
          .set({
            state: param('state'),
            updated_at: param('updatedAt'),
            seq: param('seq'),
            snapshot: param('snapshot'),
            runner_id: param('runnerId'),
          })
          .where('id', '=', id),
      ),
      insertEvent: db.prepare(
        k
          .insertInto('task_events')
          .values({ task_id: id, seq: param('seq'), kind: param('kind'), payload: param('payload') }),
      ),
      deleteEvent: db.prepare(
        k.deleteFrom('task_events').where('task_id', '=', id).where('seq', '=', param<number>('seq')),
      ),
      writeSnapshot: db.prepare(
        k
          .updateTable('tasks')
          .set({
            state: param('state'),
            updated_at: param('updatedAt'),
            seq: param('seq'),
            snapshot: param('snapshot'),
          })
          .where('id', '=', id),
      ),
      writeStatus: db.prepare(
        k
          .updateTable('tasks')
          .set({ state: param('state'), updated_at: param('updatedAt') })
          .where('id', '=', id),
      ),
      // The row; the events logged after its snapshot (usually none) come from eventsAfter.
      selectTask: db.prepare(
        k
          .selectFrom('tasks')
          .select(['id', 'owner', 'updated_at', 'seq', 'snapshot', 'runner_id'])
          .where('id', '=', id),
      ),
      eventsAfter: db.prepare(eventsAfterQuery(k, id, param('afterSeq'))),
      byContext: db.prepare(byContextQuery(k, param('contextId'), param('limit'))),
      // The maintained counts (migration 0004): context_id '' is the owner's total.
      bumpCount: db.prepare(
        k
          .insertInto('task_counts')
          .values({ owner: param('owner'), context_id: param('scope'), n: param('added') })
          .onConflict((oc) =>
            oc
              .columns(['owner', 'context_id'])
              .doUpdateSet((eb) => ({ n: eb('task_counts.n', '+', eb.ref('excluded.n')) })),
          ),
      ),
      countOf: db.prepare(countOfQuery(k, param('owner'), param('scope'))),
      ownersInContext: db.prepare(
        k
          .selectFrom('tasks')
          .select(['owner', (eb) => eb.fn.countAll<number>().as('n')])
          .where('context_id', '=', param<string>('contextId'))
          .groupBy('owner'),
      ),
      dropCount: db.prepare(
        k
          .deleteFrom('task_counts')
          .where('owner', '=', param<string>('owner'))
          .where('context_id', '=', param<string>('scope')),
      ),
      countContext: db.prepare(countContextQuery(k, param('contextId'))),
      // Children first, so deletion does not depend on ON DELETE CASCADE being enforced.
      deleteChildren: (['push_configs', 'message_keys', 'push_outbox', 'task_events', 'turn_transcripts'] as const).map(
        (table) =>
          db.prepare(
            k
              .deleteFrom(table)
              .where('task_id', 'in', (eb) =>
                eb.selectFrom('tasks').select('id').where('context_id', '=', param<string>('contextId')),
              ),
          ),
      ),
      deleteTasks: db.prepare(k.deleteFrom('tasks').where('context_id', '=', param<string>('contextId'))),
    };

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
    // These pairs run inside a group commit (SqliteDatabase.write), which makes them one
    // transaction with the rest of the group. Only their first statement can fail on its own (a
    // duplicate key, or the task missing under the foreign key), before the second has run, so
    // they need no savepoint of their own: a savepoint pair per event was a visible cost.
    this.appendWithTask = (p: AppendValues): void => {
      q.insertEvent.run(p);
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
    };
    // The task row carries its message key, under a unique index: its insert is the statement that
    // can conflict (a concurrent send of the same message), and then nothing else has run.
    this.createWithCounts = (
      p: { owner: string; contextId: string; messageId: string | null } & Record<string, unknown>,
    ): void => {
      try {
        q.insertTask.run(p);
      } catch (err) {
        if (p.messageId !== null && isConstraintError(err, 'UNIQUE')) throw messageKeyTaken(p.messageId);
        throw err;
      }
      q.bumpCount.run({ owner: p.owner, scope: '', added: 1 });
      q.bumpCount.run({ owner: p.owner, scope: p.contextId, added: 1 });
    };
    const insertKey = (key: MessageKey, taskId: string): void => {
      try {
        q.insertKey.run({ ...key, id: taskId });
      } catch (err) {
        if (isConstraintError(err, 'PRIMARYKEY')) throw messageKeyTaken(key.messageId);
        if (isConstraintError(err, 'FOREIGNKEY')) throw taskNotFound(taskId);
        throw err;
      }
    };
    this.claimSnapshot = (p: Record<string, unknown>, key: MessageKey | undefined): number => {
      if (key) insertKey(key, String(p.id));
      const changed = q.claimSnapshot.run(p);
      if (changed === 0 && key) q.deleteKey.run({ ...key });
      else this.statuses.drop(String(p.id));
      return changed;
    };
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

  async create(task: Task, owner: string, key?: MessageKey): Promise<void> {
    const params = newTaskValues(task, owner, key, this.runnerId);
    try {
      await this.db.write(() => this.createWithCounts(params));
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

  async append(taskId: string, event: TaskEvent, snapshot?: Task, eventJson?: string): Promise<void> {
    const params = appendValues(taskId, event, snapshot, eventJson);
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

  async saveSnapshot(task: Task, seq: number, key?: MessageKey): Promise<void> {
    const params = snapshotValues(task, seq, this.runnerId);
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

const TERMINAL_SQL = TERMINAL_STATES.map((s) => `'${s}'`).join(', ');
/** A plan's chat context holds its tasks: they stay while the plan exists. */
const NOT_A_PLAN_TASK =
  "context_id NOT IN (SELECT json_extract(doc, '$.contextId') FROM plans WHERE json_extract(doc, '$.contextId') IS NOT NULL)";

/** Retention's statements (raw SQL: a partial index and a JSON path Kysely would only wrap). */
function expiryStatements(db: SqliteDatabase) {
  const s = db.sqlite;
  return {
    olderThan: s.prepare(
      `SELECT id, owner, context_id FROM tasks WHERE state IN (${TERMINAL_SQL}) AND updated_at < @before AND ${NOT_A_PLAN_TASK} ORDER BY updated_at, id LIMIT @limit`,
    ),
    countTerminal: s.prepare(`SELECT count(*) AS n FROM tasks WHERE state IN (${TERMINAL_SQL}) AND ${NOT_A_PLAN_TASK}`),
    oldest: s.prepare(
      `SELECT id, owner, context_id FROM tasks WHERE state IN (${TERMINAL_SQL}) AND ${NOT_A_PLAN_TASK} ORDER BY updated_at, id LIMIT @limit`,
    ),
    deletePush: s.prepare('DELETE FROM push_configs WHERE task_id = @id'),
    deleteEvents: s.prepare('DELETE FROM task_events WHERE task_id = @id'),
    deleteTranscript: s.prepare('DELETE FROM turn_transcripts WHERE task_id = @id'),
    deleteTask: s.prepare(`DELETE FROM tasks WHERE id = @id AND state IN (${TERMINAL_SQL})`),
    dropEmptyCount: s.prepare('DELETE FROM task_counts WHERE owner = @owner AND context_id = @scope AND n <= 0'),
  };
}

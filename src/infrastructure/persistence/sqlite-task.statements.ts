import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { param, type SqliteDatabase } from './database.ts';
import {
  byContextQuery,
  countContextQuery,
  countOfQuery,
  eventsAfterQuery,
  messageKeyQuery,
  TERMINAL_STATES,
} from './rows/task.rows.ts';
import { upsertPushConfig } from './rows/push-config.rows.ts';

/**
 * The task repository's hot statements, written with Kysely's builder, compiled and prepared once
 * (grouped by what they touch; the repository sees one flat set).
 */
export function taskStatements(db: SqliteDatabase) {
  return {
    ...taskRowWrites(db),
    ...eventsAndReads(db),
    ...keyAndRunnerStatements(db),
    ...countAndDeletionStatements(db),
  };
}

/** Writing a task's row: creating it, claiming it with a snapshot, its later snapshots and statuses. */
function taskRowWrites(db: SqliteDatabase) {
  const k = db.kysely;
  const id = param<string>('id');
  return {
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
        started_by: param('startedBy'),
      }),
    ),
    /** A new task's inline push config, written with its row (TaskRepository.create). */
    insertPush: db.prepare(upsertPushConfig(k, param('taskId'), param('configId'), param('config'))),
    claimSnapshot: db.prepare(
      k
        .updateTable('tasks')
        .set({
          state: param('state'),
          updated_at: param('updatedAt'),
          seq: param('seq'),
          snapshot: param('snapshot'),
          runner_id: param('runnerId'),
          // A follow-up's sender (null: the turn's user stays as it was).
          started_by: sql<string | null>`coalesce(${param<string | null>('startedBy')}, started_by)`,
        })
        .where('id', '=', id),
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
  };
}

/** A task's event log, and reading a task (its row, then its later events) or a context's tasks. */
function eventsAndReads(db: SqliteDatabase) {
  const k = db.kysely;
  const id = param<string>('id');
  return {
    // The event goes in only while its task has not ended (nothing follows a final event) and, for
    // a turn's event (fenced), while the task still names this runner (TaskRepository.append).
    insertEvent: db.prepare(guardedEvent(k, false)),
    insertFencedEvent: db.prepare(guardedEvent(k, true)),
    deleteEvent: db.prepare(
      k.deleteFrom('task_events').where('task_id', '=', id).where('seq', '=', param<number>('seq')),
    ),
    // The row; the events logged after its snapshot (usually none) come from eventsAfter.
    selectTask: db.prepare(
      k.selectFrom('tasks').select(['id', 'owner', 'updated_at', 'seq', 'snapshot', 'runner_id']).where('id', '=', id),
    ),
    eventsAfter: db.prepare(eventsAfterQuery(k, id, param('afterSeq'))),
    byContext: db.prepare(byContextQuery(k, param('contextId'), param('limit'))),
  };
}

/** An event's insert, from its task's row when that row still admits it (see insertEvent). */
function guardedEvent(k: SqliteDatabase['kysely'], fenced: boolean) {
  let row = k
    .selectFrom('tasks')
    .select((eb) => [
      'id',
      eb.val(param<number>('seq')).as('seq'),
      eb.val(param<string>('kind')).as('kind'),
      eb.val(param<string>('payload')).as('payload'),
    ])
    .where('id', '=', param<string>('id'))
    .where(
      'state',
      'not in',
      TERMINAL_STATES.map((s) => sql.lit(s)),
    );
  if (fenced) row = row.where('runner_id', '=', param<string>('runnerId'));
  return k.insertInto('task_events').columns(['task_id', 'seq', 'kind', 'payload']).expression(row);
}

/** Follow-up messages' idempotency keys, and which runner runs which task. */
function keyAndRunnerStatements(db: SqliteDatabase) {
  const k = db.kysely;
  const id = param<string>('id');
  return {
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
  };
}

/** The maintained counts, and deleting a context's tasks with everything keyed by them. */
function countAndDeletionStatements(db: SqliteDatabase) {
  const k = db.kysely;
  return {
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
}

type ExpiryStatement =
  | 'olderThan'
  | 'countTerminal'
  | 'oldest'
  | 'deletePush'
  | 'deleteEvents'
  | 'deleteTranscript'
  | 'deleteTask'
  | 'dropEmptyCount';

const TERMINAL_SQL = TERMINAL_STATES.map((s) => `'${s}'`).join(', ');
/** A plan's chat context holds its tasks: they stay while the plan exists. */
const NOT_A_PLAN_TASK =
  "context_id NOT IN (SELECT json_extract(doc, '$.contextId') FROM plans WHERE json_extract(doc, '$.contextId') IS NOT NULL)";

/** Retention's statements (raw SQL: a partial index and a JSON path Kysely would only wrap). */
export function expiryStatements(db: SqliteDatabase): Record<ExpiryStatement, BetterSqlite3.Statement> {
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

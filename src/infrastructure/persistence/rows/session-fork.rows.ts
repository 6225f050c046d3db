/*
 * A forked session on both engines: the rows it writes (the session, its copied tasks, their
 * transcripts and the maintained task counts) and the statements that write them, run in one
 * transaction by either repository.
 */
import type { Kysely } from 'kysely';
import type { Session } from '../../../domain/session.ts';
import type { ForkedTurn } from '../../../application/index.ts';
import { toIsoInstant } from '../iso-instant.ts';
import { type DB, type TasksTable, type TurnTranscriptsTable } from '../database-schema.ts';
import { insertSession, sessionRow, type SessionRow } from './session.rows.ts';

export interface ForkRows {
  session: SessionRow;
  tasks: TasksTable[];
  transcripts: TurnTranscriptsTable[];
}

/** Rows per multi-row insert: well inside both engines' limits on bound values. */
const CHUNK = 200;

/**
 * The rows of a fork made at `now`. The copies are listed by creation time, so they are given
 * distinct instants just before `now`, in their order: a turn sent into the fork later sorts after
 * them whatever the clock does within the millisecond.
 */
export function forkRows(session: Session, turns: readonly ForkedTurn[], now: Date): ForkRows {
  const at = now.toISOString();
  const base = now.getTime() - turns.length;
  const tasks: TasksTable[] = [];
  const transcripts: TurnTranscriptsTable[] = [];
  turns.forEach(({ task, transcript }, i) => {
    tasks.push({
      id: task.id,
      context_id: session.id,
      owner: session.owner,
      state: task.status.state,
      created_at: new Date(base + i).toISOString(),
      updated_at: toIsoInstant(task.status.timestamp ?? at, 'task.status.timestamp'),
      seq: 0,
      snapshot: JSON.stringify(task),
      runner_id: null,
      message_id: null,
      message_hash: null,
      // A fork's copies cost no tokens: no user's limits count them.
      started_by: null,
    });
    if (transcript)
      transcripts.push({ task_id: task.id, context_id: session.id, doc: JSON.stringify(transcript), updated_at: at });
  });
  return { session: sessionRow(session), tasks, transcripts };
}

const chunks = <T>(rows: readonly T[]): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
};

/** The statements of a fork, in the order they must run (one transaction). */
export function forkStatements(k: Kysely<DB>, rows: ForkRows) {
  const { owner, id } = rows.session;
  const n = rows.tasks.length;
  const statements = [
    insertSession(k, rows.session),
    ...chunks(rows.tasks).map((c) => k.insertInto('tasks').values(c)),
    ...chunks(rows.transcripts).map((c) => k.insertInto('turn_transcripts').values(c)),
  ];
  if (n === 0) return statements;
  // The owner's total and the new context's count, in key order (as every writer of task_counts locks them).
  const counts = k
    .insertInto('task_counts')
    .values([
      { owner, context_id: '', n },
      { owner, context_id: id, n },
    ])
    .onConflict((oc) =>
      oc.columns(['owner', 'context_id']).doUpdateSet((eb) => ({ n: eb('task_counts.n', '+', eb.ref('excluded.n')) })),
    );
  return [...statements, counts];
}

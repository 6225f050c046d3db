import type { AuditEvent, AuditEventKind, AuditLog, AuditQuery } from '../../application/index.js';
import { param, type SqliteDatabase } from './database.js';
import type { AuditEventsTable } from './database.js';

/** The audit log in SQLite: one row an event, ids are ULIDs so they sort by time. */
export class SqliteAuditLog implements AuditLog {
  private readonly insert;

  constructor(private readonly db: SqliteDatabase) {
    this.insert = db.prepare(
      db.kysely.insertInto('audit_events').values({
        id: param<string>('id'),
        at: param<string>('at'),
        event: param<string>('event'),
        principal: param<string | null>('principal'),
        credential: param<string | null>('credential'),
        namespace: param<string | null>('namespace'),
        target: param<string | null>('target'),
        outcome: param<string>('outcome'),
        details: param<string | null>('details'),
        client: param<string | null>('client'),
      }),
    );
  }

  async append(e: AuditEvent): Promise<void> {
    await this.db.write(() =>
      this.insert.run({
        id: e.id,
        at: e.at,
        event: e.event,
        principal: e.principal ?? null,
        credential: e.credential ?? null,
        namespace: e.namespace ?? null,
        target: e.target ?? null,
        outcome: e.outcome,
        details: e.details ? JSON.stringify(e.details) : null,
        client: e.client ?? null,
      }),
    );
  }

  async list(q: AuditQuery): Promise<AuditEvent[]> {
    let query = this.db.kysely.selectFrom('audit_events').selectAll();
    if (q.event) query = query.where('event', '=', q.event);
    if (q.principal) query = query.where('principal', '=', q.principal);
    if (q.namespace) query = query.where('namespace', '=', q.namespace);
    if (q.since) query = query.where('at', '>=', q.since);
    if (q.before) query = query.where('id', '<', q.before);
    const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
    return rows.map(toEvent);
  }

  async prune(olderThan: string): Promise<number> {
    const r = await this.db.kysely.deleteFrom('audit_events').where('at', '<', olderThan).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

function toEvent(r: AuditEventsTable): AuditEvent {
  const e: AuditEvent = {
    id: r.id,
    at: r.at,
    event: r.event as AuditEventKind,
    outcome: r.outcome as 'ok' | 'refused',
  };
  if (r.principal !== null) e.principal = r.principal;
  if (r.credential !== null) e.credential = r.credential;
  if (r.namespace !== null) e.namespace = r.namespace;
  if (r.target !== null) e.target = r.target;
  if (r.details !== null) e.details = JSON.parse(r.details) as Record<string, unknown>;
  if (r.client !== null) e.client = r.client;
  return e;
}

import type { AuditEvent, AuditLog, AuditQuery } from '../../application/index.ts';
import { param, type SqliteDatabase } from './database.ts';
import { fromEvent, listEvents, pruneEvents } from './rows/audit.rows.ts';

/** The audit log in SQLite: one row an event, ids are ULIDs so they sort by time. */
export class SqliteAuditLog implements AuditLog {
  private readonly insert;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.db = db;
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
    await this.db.write(() => this.insert.run({ ...fromEvent(e) }));
  }

  list(q: AuditQuery): Promise<AuditEvent[]> {
    return listEvents(this.db.kysely, q);
  }

  prune(olderThan: string): Promise<number> {
    return pruneEvents(this.db.kysely, olderThan);
  }
}

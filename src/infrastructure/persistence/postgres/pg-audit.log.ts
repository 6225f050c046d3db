import type { AuditEvent, AuditLog, AuditQuery } from '../../../application/index.ts';
import { fromEvent, listEvents, pruneEvents } from '../rows/audit.rows.ts';
import type { PgDatabase } from './pg-database.ts';

/** The audit log in PostgreSQL: one row an event (ULID ids), shared by every instance. */
export class PgAuditLog implements AuditLog {
  private readonly db: PgDatabase;

  constructor(db: PgDatabase) {
    this.db = db;
  }

  async append(e: AuditEvent): Promise<void> {
    await this.db.run((k) => k.insertInto('audit_events').values(fromEvent(e)).execute());
  }

  list(q: AuditQuery): Promise<AuditEvent[]> {
    return this.db.run((k) => listEvents(k, q));
  }

  prune(olderThan: string): Promise<number> {
    return this.db.run((k) => pruneEvents(k, olderThan));
  }
}

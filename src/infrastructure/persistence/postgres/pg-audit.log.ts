import type { AuditEvent, AuditLog, AuditQuery } from '../../../application/index.js';
import { fromEvent, listEvents, pruneEvents } from '../rows/audit.rows.js';
import type { PgDatabase } from './pg-database.js';

/** The audit log in PostgreSQL: one row an event (ULID ids), shared by every instance. */
export class PgAuditLog implements AuditLog {
  constructor(private readonly db: PgDatabase) {}

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

import type { Kysely } from 'kysely';
import type { AuditEvent, AuditEventKind, AuditQuery } from '../../../application/index.ts';
import type { AuditEventsTable, DB } from '../database-schema.ts';

/** Audit events on either engine: the row mapping and the queries both audit logs run. */

/** Newest first (ids are ULIDs), filtered as the query says. */
export async function listEvents(k: Kysely<DB>, q: AuditQuery): Promise<AuditEvent[]> {
  let query = k.selectFrom('audit_events').selectAll();
  if (q.event) query = query.where('event', '=', q.event);
  if (q.principal) query = query.where('principal', '=', q.principal);
  if (q.namespace) query = query.where('namespace', '=', q.namespace);
  if (q.since) query = query.where('at', '>=', q.since);
  if (q.before) query = query.where('id', '<', q.before);
  const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
  return rows.map(toEvent);
}

/** Drops the events older than the instant; returns how many. */
export async function pruneEvents(k: Kysely<DB>, olderThan: string): Promise<number> {
  const r = await k.deleteFrom('audit_events').where('at', '<', olderThan).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function fromEvent(e: AuditEvent): AuditEventsTable {
  return {
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
  };
}

export function toEvent(r: AuditEventsTable): AuditEvent {
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

import { sql } from 'kysely';
import type { DiagnosticCheck } from '../../application/index.ts';
import type { PgDatabase, PoolStats } from '../persistence/postgres/pg-database.ts';
import { DEFAULT_LEASE_MS, type LeaseRow } from '../persistence/runner-leases.ts';
import { formatBytes, migrationCheck, runCheck, type Check } from './system.probe.ts';

/** The oldest PostgreSQL we test on and support without a warning. */
const MIN_PG_MAJOR = 13;

export interface PgStorageChecksOptions {
  /** How long a runner lease lasts without renewal (as the registry's leaseMs). */
  leaseMs?: number | undefined;
  now?: () => number;
}

/** The storage checks of a PostgreSQL database (the storage part of `agents diagnostics`). */
export async function pgStorageChecks(db: PgDatabase, opts: PgStorageChecksOptions = {}): Promise<DiagnosticCheck[]> {
  const out: DiagnosticCheck[] = [];
  await runCheck(out, 'database reachable', 'storage', async () => {
    await db.run((k) => sql`select 1`.execute(k));
    return { status: 'ok', detail: `PostgreSQL ${db.displayUrl}` };
  });
  await runCheck(out, 'postgresql version', 'versions', async () => postgresVersionStatus(await db.serverVersion()));
  await runCheck(out, 'schema migrations', 'storage', () => migrationCheck(db.kysely));
  await runCheck(out, 'connection pool', 'storage', () => poolStatus(db.poolStats()));
  await runCheck(out, 'database size', 'storage', async () => {
    const r = await db.run((k) => sql<{ n: number }>`select pg_database_size(current_database()) as n`.execute(k));
    return { status: 'ok', detail: formatBytes(Number(r.rows[0]?.n ?? 0)) };
  });
  await runCheck(out, 'instances', 'storage', async () => {
    const rows = await db.run((k) => k.selectFrom('runners').select(['id', 'pid', 'host', 'heartbeat_at']).execute());
    return instancesStatus(rows, (opts.now ?? Date.now)(), opts.leaseMs ?? DEFAULT_LEASE_MS);
  });
  return out;
}

/** `PostgreSQL 15.18 (Debian ...)`: ok from version 13 on, a warning below. */
export function postgresVersionStatus(version: string): Check {
  const major = Number(/PostgreSQL (\d+)/.exec(version)?.[1]);
  if (Number.isFinite(major) && major < MIN_PG_MAJOR)
    return {
      status: 'warn',
      detail: `${version} is older than ${MIN_PG_MAJOR}`,
      hint: `upgrade to PostgreSQL ${MIN_PG_MAJOR} or later (older versions are not tested)`,
    };
  return { status: 'ok', detail: version };
}

/** The pool's connections; a warning when callers wait for one. */
export function poolStatus(s: PoolStats): Check {
  const detail = `${s.size} of ${s.max} connections open, ${s.idle} idle, ${s.waiting} waiting`;
  if (s.waiting > 0)
    return {
      status: 'warn',
      detail,
      hint: 'requests are waiting for a database connection: raise CLEVERAGENTS_DATABASE_POOL (and the server’s max_connections) or add instances',
    };
  return { status: 'ok', detail };
}

/** How many instances hold a live lease on this database, and on which hosts. */
export function instancesStatus(rows: readonly LeaseRow[], now: number, leaseMs: number): Check {
  const hosts = new Map<string, number>();
  for (const r of rows)
    if (now - Date.parse(r.heartbeat_at) <= leaseMs) hosts.set(r.host, (hosts.get(r.host) ?? 0) + 1);
  const live = [...hosts.values()].reduce((a, b) => a + b, 0);
  if (live === 0) return { status: 'ok', detail: 'no instance holds a live lease on this database' };
  const on = [...hosts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([host, n]) => (n === 1 ? host : `${host} (${n})`))
    .join(', ');
  return { status: 'ok', detail: `${live} ${live === 1 ? 'instance shares' : 'instances share'} this database: ${on}` };
}

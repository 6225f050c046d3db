import type BetterSqlite3 from 'better-sqlite3';

/** The tables a principal is made of: a write to any of them may change who a credential is. */
const AUTH_TABLES = ['api_keys', 'users', 'namespace_members', 'namespaces'] as const;

export interface AuthChanges {
  version(): number;
}

/** One tracker per connection: its function and triggers belong to the connection. */
const trackers = new WeakMap<BetterSqlite3.Database, AuthChanges>();

/**
 * Counts the writes that may change a principal. This connection's own writes, whatever code
 * makes them, fire TEMP triggers (the connection's alone: nothing is stored in the file) that call
 * back into the counter; other connections' commits (another instance, a tool on the file) move
 * `PRAGMA data_version`, which then counts as a change too. A key's last-use stamp fires the
 * trigger as well: it is written at most once a minute per key, and a needless re-check is safe.
 */
export function authChangesOf(sqlite: BetterSqlite3.Database): AuthChanges {
  const known = trackers.get(sqlite);
  if (known) return known;
  let local = 0;
  let version = 0;
  let seen: unknown;
  sqlite.function('ca_auth_changed', { deterministic: false, varargs: false }, () => {
    local++;
    return null;
  });
  for (const table of AUTH_TABLES)
    for (const op of ['INSERT', 'UPDATE', 'DELETE'])
      sqlite.exec(
        `CREATE TEMP TRIGGER IF NOT EXISTS ca_auth_${table}_${op.toLowerCase()} AFTER ${op} ON main.${table} BEGIN SELECT ca_auth_changed(); END`,
      );
  // A counter read, not a statement on the data: it needs no connection lock.
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  let counted = 0;
  const tracker: AuthChanges = {
    version() {
      const other = dataVersion.get();
      if (other !== seen || local !== counted) {
        seen = other;
        counted = local;
        version++;
      }
      return version;
    },
  };
  trackers.set(sqlite, tracker);
  return tracker;
}

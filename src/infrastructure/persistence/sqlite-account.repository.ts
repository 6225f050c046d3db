import type BetterSqlite3 from 'better-sqlite3';
import type { AccountRepository, ApiKeyRecord, KeyLookup, UserRecord } from '../../application/index.js';
import type { Role } from '../../domain/permissions.js';
import { param, type SqliteDatabase } from './database.js';
import * as rows from './rows/account.rows.js';

/**
 * Users and API keys in SQLite (migration 0009); memberships are namespace_members rows. What
 * every authenticated request reads (a key with its user, a user by external id, the roles) is
 * compiled once: building the query each time cost more than running it.
 */
export class SqliteAccountRepository implements AccountRepository {
  private readonly q;
  private readonly changes: AuthChanges;

  constructor(private readonly db: SqliteDatabase) {
    this.changes = authChangesOf(db.sqlite);
    const k = db.kysely;
    this.q = {
      key: db.prepare(rows.keyWithUser(k).where('k.id', '=', param<string>('id'))),
      roles: db.prepare(rows.membershipsOf(k).where('principal', '=', param<string>('name'))),
      external: db.prepare(k.selectFrom('users').selectAll().where('external_id', '=', param<string>('externalId'))),
    };
  }

  countUsers(): Promise<number> {
    return rows.countUsers(this.db.kysely);
  }

  getUser(name: string): Promise<UserRecord | undefined> {
    return rows.getUser(this.db.kysely, name);
  }

  async userByExternalId(externalId: string): Promise<UserRecord | undefined> {
    const r = await this.db.exclusive(() => this.q.external.get({ externalId }));
    return r && rows.toUser(r);
  }

  listUsers(): Promise<UserRecord[]> {
    return rows.listUsers(this.db.kysely);
  }

  /**
   * The user, its default namespace and its owner membership there, in one transaction. A user
   * name taken, or a default namespace that exists and belongs to someone else, is refused
   * (ALREADY_EXISTS) and changes nothing — unless `joinExisting` (the bootstrap admin, who becomes
   * an owner of the existing `local/`).
   */
  async createUser(user: UserRecord, opts: { joinExisting?: boolean } = {}): Promise<void> {
    await this.db.kysely.transaction().execute((tx) => rows.createUserIn(tx, user, opts));
  }

  setDisabled(name: string, at: string | undefined): Promise<void> {
    return rows.setDisabled(this.db.kysely, name, at);
  }

  async rolesOf(name: string): Promise<Record<string, Role>> {
    return rows.toRoles(await this.db.exclusive(() => this.q.roles.all({ name })));
  }

  /** Two indexed reads: the key with its user (primary keys), then the user's memberships. */
  async lookupKey(id: string): Promise<KeyLookup | undefined> {
    const [r, memberships] = await this.db.exclusive(() => {
      const found = this.q.key.get({ id });
      return [found, found ? this.q.roles.all({ name: found.name }) : []] as const;
    });
    return r && rows.toKeyLookup(r, memberships);
  }

  createKey(key: ApiKeyRecord): Promise<void> {
    return rows.createKey(this.db.kysely, key);
  }

  async replaceKey(key: ApiKeyRecord): Promise<void> {
    await this.db.kysely.transaction().execute((tx) => rows.replaceKeyIn(tx, key));
  }

  listKeys(user?: string): Promise<ApiKeyRecord[]> {
    return rows.listKeys(this.db.kysely, user);
  }

  getKey(id: string): Promise<ApiKeyRecord | undefined> {
    return rows.getKey(this.db.kysely, id);
  }

  revokeKey(id: string, at: string): Promise<void> {
    return rows.revokeKey(this.db.kysely, id, at);
  }

  touchKey(id: string, at: string): Promise<void> {
    return rows.touchKey(this.db.kysely, id, at);
  }

  authVersion(): number {
    return this.changes.version();
  }
}

/** The tables a principal is made of: a write to any of them may change who a credential is. */
const AUTH_TABLES = ['api_keys', 'users', 'namespace_members', 'namespaces'] as const;

interface AuthChanges {
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
function authChangesOf(sqlite: BetterSqlite3.Database): AuthChanges {
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

import type { AccountRepository, ApiKeyRecord, KeyLookup, UserRecord } from '../../application/index.ts';
import type { Role } from '../../domain/permissions.ts';
import { authChangesOf, type AuthChanges } from './auth-changes.ts';
import { param, type SqliteDatabase } from './database.ts';
import * as rows from './rows/account.rows.ts';

/**
 * Users and API keys in SQLite (migration 0009); memberships are namespace_members rows. What
 * every authenticated request reads (a key with its user, a user by external id, the roles) is
 * compiled once: building the query each time cost more than running it.
 */
export class SqliteAccountRepository implements AccountRepository {
  private readonly q;
  private readonly changes: AuthChanges;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.db = db;
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

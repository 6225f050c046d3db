import type { AccountRepository, ApiKeyRecord, KeyLookup, UserRecord } from '../../../application/index.ts';
import type { Role } from '../../../domain/permissions.ts';
import * as rows from '../rows/account.rows.ts';
import { pgAuthChangesOf, type PgAuthChanges } from './pg-auth-changes.ts';
import { isPgConstraintError, type PgDatabase } from './pg-database.ts';

/** How often createUser runs again after losing a race to a concurrent one (it then sees the winner). */
const CREATE_USER_ATTEMPTS = 3;

/**
 * Users and API keys in PostgreSQL (the same tables as SQLite). The key lookup, on every
 * authenticated request, is one indexed query: the key, its user and the user's memberships
 * joined by primary keys and the principal index.
 */
export class PgAccountRepository implements AccountRepository {
  private readonly db: PgDatabase;
  private readonly changes: PgAuthChanges;

  constructor(db: PgDatabase) {
    this.db = db;
    this.changes = pgAuthChangesOf(db);
  }

  /** Runs a write that may change a principal, then counts it (before its notification comes back). */
  private async changing<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      // Even a failed write may have committed (the answer was lost): count it either way.
      this.changes.changed();
    }
  }

  countUsers(): Promise<number> {
    return this.db.run(rows.countUsers);
  }

  getUser(name: string): Promise<UserRecord | undefined> {
    return this.db.run((k) => rows.getUser(k, name));
  }

  userByExternalId(externalId: string): Promise<UserRecord | undefined> {
    return this.db.run(async (k) => {
      const r = await k.selectFrom('users').selectAll().where('external_id', '=', externalId).executeTakeFirst();
      return r && rows.toUser(r);
    });
  }

  listUsers(): Promise<UserRecord[]> {
    return this.db.run(rows.listUsers);
  }

  /**
   * As on SQLite, in one transaction. Two instances creating the same user (or claiming the same
   * namespace) at once: the loser's insert violates a unique key, and its next attempt sees the
   * winner's rows and refuses exactly as SQLite does (ALREADY_EXISTS).
   */
  async createUser(user: UserRecord, opts: { joinExisting?: boolean } = {}): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.changing(this.db.transaction((tx) => rows.createUserIn(tx, user, opts)));
        return;
      } catch (err) {
        if (attempt >= CREATE_USER_ATTEMPTS || !isPgConstraintError(err, 'unique')) throw err;
      }
    }
  }

  setDisabled(name: string, at: string | undefined): Promise<void> {
    return this.changing(this.db.run((k) => rows.setDisabled(k, name, at)));
  }

  rolesOf(name: string): Promise<Record<string, Role>> {
    return this.db.run(async (k) => rows.toRoles(await rows.membershipsOf(k).where('principal', '=', name).execute()));
  }

  /** One query: a row per membership (one with null membership columns when there is none). */
  lookupKey(id: string): Promise<KeyLookup | undefined> {
    return this.db.run(async (k) => {
      const found = await rows
        .keyWithUser(k)
        .leftJoin('namespace_members as m', 'm.principal', 'u.name')
        .select(['m.namespace as member_namespace', 'm.role as member_role'])
        .where('k.id', '=', id)
        .orderBy('m.namespace')
        .execute();
      const first = found[0];
      if (!first) return undefined;
      const memberships = found.flatMap((r) =>
        r.member_namespace !== null && r.member_role !== null
          ? [{ namespace: r.member_namespace, role: r.member_role }]
          : [],
      );
      return rows.toKeyLookup(first, memberships);
    });
  }

  createKey(key: ApiKeyRecord): Promise<void> {
    return this.changing(this.db.run((k) => rows.createKey(k, key)));
  }

  /** The user's row is locked first, so two instances replacing the same key leave one. */
  async replaceKey(key: ApiKeyRecord): Promise<void> {
    await this.changing(
      this.db.transaction(async (tx) => {
        await tx.selectFrom('users').select('name').where('name', '=', key.user).forUpdate().execute();
        await rows.replaceKeyIn(tx, key);
      }),
    );
  }

  listKeys(user?: string): Promise<ApiKeyRecord[]> {
    return this.db.run((k) => rows.listKeys(k, user));
  }

  getKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.db.run((k) => rows.getKey(k, id));
  }

  revokeKey(id: string, at: string): Promise<void> {
    return this.changing(this.db.run((k) => rows.revokeKey(k, id, at)));
  }

  /** Changes no principal: the triggers leave `last_used_at` out, and so does this. */
  touchKey(id: string, at: string): Promise<void> {
    return this.db.run((k) => rows.touchKey(k, id, at));
  }

  authVersion(): number {
    return this.changes.version();
  }
}

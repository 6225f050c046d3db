import type { AccountRepository, ApiKeyRecord, KeyLookup, UserRecord } from '../../application/index.js';
import { AppError } from '../../domain/errors.js';
import type { Role } from '../../domain/permissions.js';
import { param, type ApiKeysTable, type SqliteDatabase, type UsersTable } from './database.js';

/**
 * Users and API keys in SQLite (migration 0009); memberships are namespace_members rows. What
 * every authenticated request reads (a key with its user, a user by external id, the roles) is
 * compiled once: building the query each time cost more than running it.
 */
export class SqliteAccountRepository implements AccountRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    const k = db.kysely;
    this.q = {
      key: db.prepare(
        k
          .selectFrom('api_keys as k')
          .innerJoin('users as u', 'u.name', 'k.user_name')
          .select([
            'k.id',
            'k.user_name',
            'k.name as key_name',
            'k.hash',
            'k.created_at as key_created_at',
            'k.expires_at',
            'k.revoked_at',
            'k.last_used_at',
            'u.name',
            'u.display_name',
            'u.admin',
            'u.default_namespace',
            'u.external_id',
            'u.created_at',
            'u.disabled_at',
          ])
          .where('k.id', '=', param<string>('id')),
      ),
      roles: db.prepare(
        k
          .selectFrom('namespace_members')
          .select(['namespace', 'role'])
          .where('principal', '=', param<string>('name'))
          .orderBy('namespace'),
      ),
      external: db.prepare(k.selectFrom('users').selectAll().where('external_id', '=', param<string>('externalId'))),
    };
  }

  async countUsers(): Promise<number> {
    const r = await this.db.kysely
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async getUser(name: string): Promise<UserRecord | undefined> {
    const r = await this.db.kysely.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
    return r && toUser(r);
  }

  async userByExternalId(externalId: string): Promise<UserRecord | undefined> {
    const r = await this.db.exclusive(() => this.q.external.get({ externalId }));
    return r && toUser(r);
  }

  async listUsers(): Promise<UserRecord[]> {
    const rows = await this.db.kysely.selectFrom('users').selectAll().orderBy('name').execute();
    return rows.map(toUser);
  }

  /**
   * The user, its default namespace and its owner membership there, in one transaction. A user
   * name taken, or a default namespace that exists and belongs to someone else, is refused
   * (ALREADY_EXISTS) and changes nothing — unless `joinExisting` (the bootstrap admin, who becomes
   * an owner of the existing `local/`).
   */
  async createUser(user: UserRecord, opts: { joinExisting?: boolean } = {}): Promise<void> {
    await this.db.kysely.transaction().execute(async (tx) => {
      const taken = await tx.selectFrom('users').select('name').where('name', '=', user.name).executeTakeFirst();
      if (taken)
        throw new AppError('ALREADY_EXISTS', `User ${user.name} already exists`, {
          details: { entity: 'user', name: user.name },
          hint: 'pick another name (see `agents user list`)',
        });
      if (user.externalId !== undefined) {
        const ext = await tx
          .selectFrom('users')
          .select('name')
          .where('external_id', '=', user.externalId)
          .executeTakeFirst();
        if (ext)
          throw new AppError('ALREADY_EXISTS', `The identity ${user.externalId} already belongs to user ${ext.name}`, {
            details: { entity: 'user', name: ext.name },
          });
      }
      const ns = await tx
        .selectFrom('namespaces')
        .select('owner')
        .where('name', '=', user.defaultNamespace)
        .executeTakeFirst();
      if (ns && ns.owner !== user.name && opts.joinExisting !== true)
        throw new AppError(
          'ALREADY_EXISTS',
          `The namespace ${user.defaultNamespace} already exists and belongs to someone else, so user ${user.name} cannot have it`,
          {
            details: { entity: 'namespace', name: user.defaultNamespace },
            hint: 'pick another user name',
          },
        );
      await tx
        .insertInto('users')
        .values({
          name: user.name,
          display_name: user.displayName ?? null,
          admin: user.admin ? 1 : 0,
          default_namespace: user.defaultNamespace,
          external_id: user.externalId ?? null,
          created_at: user.createdAt,
          disabled_at: user.disabledAt ?? null,
        })
        .execute();
      if (!ns)
        await tx
          .insertInto('namespaces')
          .values({ name: user.defaultNamespace, owner: user.name, created_at: user.createdAt })
          .execute();
      await tx
        .insertInto('namespace_members')
        .values({ namespace: user.defaultNamespace, principal: user.name, role: 'owner', added_at: user.createdAt })
        .onConflict((oc) => oc.columns(['namespace', 'principal']).doUpdateSet({ role: 'owner' }))
        .execute();
    });
  }

  async setDisabled(name: string, at: string | undefined): Promise<void> {
    await this.db.kysely
      .updateTable('users')
      .set({ disabled_at: at ?? null })
      .where('name', '=', name)
      .execute();
  }

  async rolesOf(name: string): Promise<Record<string, Role>> {
    const rows = await this.db.exclusive(() => this.q.roles.all({ name }));
    return Object.fromEntries(rows.map((r) => [r.namespace, r.role as Role]));
  }

  /** Two indexed reads: the key with its user (primary keys), then the user's memberships. */
  async lookupKey(id: string): Promise<KeyLookup | undefined> {
    const [r, rows] = await this.db.exclusive(() => {
      const found = this.q.key.get({ id });
      return [found, found ? this.q.roles.all({ name: found.name }) : []] as const;
    });
    if (!r) return undefined;
    const key = toKey({
      id: r.id,
      user_name: r.user_name,
      name: r.key_name,
      hash: r.hash,
      created_at: r.key_created_at,
      expires_at: r.expires_at,
      revoked_at: r.revoked_at,
      last_used_at: r.last_used_at,
    });
    const user = toUser(r);
    return { key, user, roles: Object.fromEntries(rows.map((m) => [m.namespace, m.role as Role])) };
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    await this.db.kysely.insertInto('api_keys').values(fromKey(key)).execute();
  }

  async replaceKey(key: ApiKeyRecord): Promise<void> {
    await this.db.kysely.transaction().execute(async (tx) => {
      await tx.deleteFrom('api_keys').where('user_name', '=', key.user).where('name', '=', key.name).execute();
      await tx.deleteFrom('api_keys').where('id', '=', key.id).execute();
      await tx.insertInto('api_keys').values(fromKey(key)).execute();
    });
  }

  async listKeys(user?: string): Promise<ApiKeyRecord[]> {
    let q = this.db.kysely.selectFrom('api_keys').selectAll();
    if (user !== undefined) q = q.where('user_name', '=', user);
    const rows = await q.orderBy('user_name').orderBy('created_at').orderBy('id').execute();
    return rows.map(toKey);
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const r = await this.db.kysely.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toKey(r);
  }

  async revokeKey(id: string, at: string): Promise<void> {
    await this.db.kysely
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async touchKey(id: string, at: string): Promise<void> {
    await this.db.kysely.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}

function toUser(r: UsersTable): UserRecord {
  const u: UserRecord = {
    name: r.name,
    admin: r.admin === 1,
    defaultNamespace: r.default_namespace,
    createdAt: r.created_at,
  };
  if (r.display_name !== null) u.displayName = r.display_name;
  if (r.external_id !== null) u.externalId = r.external_id;
  if (r.disabled_at !== null) u.disabledAt = r.disabled_at;
  return u;
}

function toKey(r: ApiKeysTable): ApiKeyRecord {
  const k: ApiKeyRecord = { id: r.id, user: r.user_name, name: r.name, hash: r.hash, createdAt: r.created_at };
  if (r.expires_at !== null) k.expiresAt = r.expires_at;
  if (r.revoked_at !== null) k.revokedAt = r.revoked_at;
  if (r.last_used_at !== null) k.lastUsedAt = r.last_used_at;
  return k;
}

function fromKey(k: ApiKeyRecord): ApiKeysTable {
  return {
    id: k.id,
    user_name: k.user,
    name: k.name,
    hash: k.hash,
    created_at: k.createdAt,
    expires_at: k.expiresAt ?? null,
    revoked_at: k.revokedAt ?? null,
    last_used_at: k.lastUsedAt ?? null,
  };
}

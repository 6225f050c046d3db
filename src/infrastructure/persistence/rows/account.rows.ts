import type { Kysely } from 'kysely';
import type { ApiKeyRecord, KeyLookup, UserRecord } from '../../../application/index.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Role } from '../../../domain/permissions.ts';
import type { ApiKeysTable, DB, UsersTable } from '../database-schema.ts';

/*
 * Users and API keys on either engine: the row <-> record mapping and every query the SQLite and
 * PostgreSQL account repositories share (written against Kysely<DB>; SQLite prepares the hot
 * ones, PostgreSQL runs them on its pool).
 */

/** A key joined with its user: the columns of the key lookup (aliased where both tables have one). */
export function keyWithUser(k: Kysely<DB>) {
  return k
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
    ]);
}

/** A row of {@link keyWithUser}. */
export type KeyWithUserRow = Omit<ApiKeysTable, 'name' | 'created_at'> &
  UsersTable & { key_name: string; key_created_at: string };

/** A user's memberships, by namespace. */
export function membershipsOf(k: Kysely<DB>) {
  return k.selectFrom('namespace_members').select(['namespace', 'role']).orderBy('namespace');
}

export function toRoles(rows: readonly { namespace: string; role: string }[]): Record<string, Role> {
  return Object.fromEntries(rows.map((r) => [r.namespace, r.role as Role]));
}

/** The lookup of one key: the joined row and the user's memberships. */
export function toKeyLookup(r: KeyWithUserRow, memberships: readonly { namespace: string; role: string }[]): KeyLookup {
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
  return { key, user: toUser(r), roles: toRoles(memberships) };
}

export async function countUsers(k: Kysely<DB>): Promise<number> {
  const r = await k
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function getUser(k: Kysely<DB>, name: string): Promise<UserRecord | undefined> {
  const r = await k.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
  return r && toUser(r);
}

export async function listUsers(k: Kysely<DB>): Promise<UserRecord[]> {
  const rows = await k.selectFrom('users').selectAll().orderBy('name').execute();
  return rows.map(toUser);
}

/**
 * The body of AccountRepository.createUser, run inside the caller's transaction: the checks
 * (name, external identity, default namespace), then the user, the namespace when new and the
 * owner membership.
 */
export async function createUserIn(tx: Kysely<DB>, user: UserRecord, opts: { joinExisting?: boolean }): Promise<void> {
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
  await tx.insertInto('users').values(fromUser(user)).execute();
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
}

export async function setDisabled(k: Kysely<DB>, name: string, at: string | undefined): Promise<void> {
  await k
    .updateTable('users')
    .set({ disabled_at: at ?? null })
    .where('name', '=', name)
    .execute();
}

export async function createKey(k: Kysely<DB>, key: ApiKeyRecord): Promise<void> {
  await k.insertInto('api_keys').values(fromKey(key)).execute();
}

/** The body of AccountRepository.replaceKey, inside the caller's transaction. */
export async function replaceKeyIn(tx: Kysely<DB>, key: ApiKeyRecord): Promise<void> {
  await tx.deleteFrom('api_keys').where('user_name', '=', key.user).where('name', '=', key.name).execute();
  await tx.deleteFrom('api_keys').where('id', '=', key.id).execute();
  await createKey(tx, key);
}

export async function listKeys(k: Kysely<DB>, user?: string): Promise<ApiKeyRecord[]> {
  let q = k.selectFrom('api_keys').selectAll();
  if (user !== undefined) q = q.where('user_name', '=', user);
  const rows = await q.orderBy('user_name').orderBy('created_at').orderBy('id').execute();
  return rows.map(toKey);
}

export async function getKey(k: Kysely<DB>, id: string): Promise<ApiKeyRecord | undefined> {
  const r = await k.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toKey(r);
}

/** Revokes a key once: a second revocation keeps the first instant. */
export async function revokeKey(k: Kysely<DB>, id: string, at: string): Promise<void> {
  await k
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function touchKey(k: Kysely<DB>, id: string, at: string): Promise<void> {
  await k.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}

export function toUser(r: UsersTable): UserRecord {
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

export function fromUser(u: UserRecord): UsersTable {
  return {
    name: u.name,
    display_name: u.displayName ?? null,
    admin: u.admin ? 1 : 0,
    default_namespace: u.defaultNamespace,
    external_id: u.externalId ?? null,
    created_at: u.createdAt,
    disabled_at: u.disabledAt ?? null,
  };
}

export function toKey(r: ApiKeysTable): ApiKeyRecord {
  const k: ApiKeyRecord = { id: r.id, user: r.user_name, name: r.name, hash: r.hash, createdAt: r.created_at };
  if (r.expires_at !== null) k.expiresAt = r.expires_at;
  if (r.revoked_at !== null) k.revokedAt = r.revoked_at;
  if (r.last_used_at !== null) k.lastUsedAt = r.last_used_at;
  return k;
}

export function fromKey(k: ApiKeyRecord): ApiKeysTable {
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

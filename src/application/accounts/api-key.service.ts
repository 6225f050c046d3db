import { randomBytes, randomInt } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import type { AccountRepository, ApiKeyRecord, KeyHasher } from '../ports/account.repository.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { AuditRecorder } from './audit.service.ts';
import { requireServerAdmin, requireServerMode } from './server-admin.rules.ts';

/** A key as the owner may see it: never its hash. */
export interface KeyView {
  id: string;
  name: string;
  user: string;
  createdAt: string;
  expiresAt?: string | undefined;
  revokedAt?: string | undefined;
  lastUsedAt?: string | undefined;
}

/** What `key create` takes: a name, an optional expiry, and (administrators) whose key it is. */
export interface NewKeyInput {
  name: string;
  expiresInDays?: number | undefined;
  expiresAt?: string | undefined;
  user?: string | undefined;
}

/** A key just made: the secret is shown this once. */
export interface NewKey {
  id: string;
  key: string;
  name: string;
  user: string;
  expiresAt?: string | undefined;
}

/** What making a key needs: where it is stored, its secret's slow hash, the audit log and the clock. */
export interface KeyIssuerDeps {
  accounts: Pick<AccountRepository, 'createKey'>;
  hasher: Pick<KeyHasher, 'hash'>;
  audit: AuditRecorder;
  now: () => number;
}

export interface ApiKeyServiceDeps extends Omit<KeyIssuerDeps, 'accounts' | 'now'> {
  accounts: Pick<AccountRepository, 'getUser' | 'createKey' | 'listKeys' | 'getKey' | 'revokeKey'>;
  /** What the sign-in remembers of verified secrets: a revoked key's is dropped. */
  verified: { forget(keyId: string): void };
  now?: () => number;
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const MAX_KEY_DAYS = 3650;

/**
 * Makes and stores a key `ca_<id>_<secret>` for the user (its secret only as a slow hash) and
 * audits it. The caller has checked that `by` may: a user's own key, an administrator's for
 * anyone, or the default key of a user just added.
 */
export async function issueKey(
  deps: KeyIssuerDeps,
  user: string,
  name: string,
  expiresAt: string | undefined,
  by: Principal,
): Promise<NewKey> {
  let id = '';
  for (let i = 0; i < 12; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  id = `ca_${id}`;
  const secret = randomBytes(32).toString('base64url');
  const key = `${id}_${secret}`;
  const record: ApiKeyRecord = {
    id,
    user,
    name,
    hash: await deps.hasher.hash(secret),
    createdAt: new Date(deps.now()).toISOString(),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
  await deps.accounts.createKey(record);
  await deps.audit.record({
    event: 'key.created',
    by,
    target: id,
    outcome: 'ok',
    details: { user, name, ...(expiresAt !== undefined ? { expiresAt } : {}) },
  });
  return { id, key, name, user, ...(expiresAt !== undefined ? { expiresAt } : {}) };
}

/** Server-mode API keys (`facade.keys`): yours, or anyone's for server administrators. */
export class ApiKeyService {
  private readonly deps: ApiKeyServiceDeps;
  private readonly now: () => number;

  constructor(deps: ApiKeyServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  async create(input: NewKeyInput, by: Principal): Promise<NewKey> {
    requireServerMode(by);
    const owner = input.user ?? by.id;
    if (owner !== by.id) {
      requireServerAdmin(by, "make other users' keys");
      if (!(await this.deps.accounts.getUser(owner)))
        throw new AppError('NOT_FOUND', `User ${owner} was not found`, {
          details: { entity: 'user', name: owner },
          hint: 'see the users with `agents user list`',
        });
    }
    const expiresAt = this.expiryOf(input);
    return issueKey({ ...this.deps, now: this.now }, owner, input.name, expiresAt, by);
  }

  async list(input: { user?: string | undefined }, by: Principal): Promise<{ keys: KeyView[] }> {
    requireServerMode(by);
    const user = input.user ?? by.id;
    if (user !== by.id) requireServerAdmin(by, "list other users' keys");
    return { keys: (await this.deps.accounts.listKeys(user)).map(keyView) };
  }

  async revoke(id: string, by: Principal): Promise<KeyView> {
    requireServerMode(by);
    const key = await this.deps.accounts.getKey(id);
    // Someone else's key looks exactly like a missing one (unless you are an administrator).
    if (!key || (key.user !== by.id && !by.admin))
      throw new AppError('NOT_FOUND', `API key ${id} was not found`, {
        details: { entity: 'key', name: id },
        hint: 'see your keys with `agents key list`',
      });
    if (key.revokedAt !== undefined) return keyView(key);
    const at = new Date(this.now()).toISOString();
    await this.deps.accounts.revokeKey(id, at);
    this.deps.verified.forget(id);
    await this.deps.audit.record({ event: 'key.revoked', by, target: id, outcome: 'ok', details: { user: key.user } });
    return keyView({ ...key, revokedAt: at });
  }

  /** The instant the new key expires (undefined: never), from days or an instant, checked. */
  private expiryOf(input: NewKeyInput): string | undefined {
    if (input.expiresInDays !== undefined && input.expiresAt !== undefined)
      throw new AppError('INVALID_PARAMS', 'Give expiresInDays or expiresAt, not both', {
        fields: [{ field: 'expiresAt', description: 'cannot be combined with expiresInDays' }],
      });
    if (input.expiresInDays !== undefined) {
      if (!Number.isInteger(input.expiresInDays) || input.expiresInDays < 1 || input.expiresInDays > MAX_KEY_DAYS)
        throw new AppError('INVALID_PARAMS', `expiresInDays must be a whole number from 1 to ${MAX_KEY_DAYS}`, {
          fields: [{ field: 'expiresInDays', description: `1 to ${MAX_KEY_DAYS}` }],
        });
      return new Date(this.now() + input.expiresInDays * 86_400_000).toISOString();
    }
    if (input.expiresAt === undefined) return undefined;
    const t = Date.parse(input.expiresAt);
    if (Number.isNaN(t) || t <= this.now())
      throw new AppError('INVALID_PARAMS', 'expiresAt must be an instant in the future', {
        fields: [{ field: 'expiresAt', description: 'an ISO 8601 instant in the future' }],
      });
    return new Date(t).toISOString();
  }
}

function keyView(k: ApiKeyRecord): KeyView {
  const { hash: _hash, ...rest } = k;
  return rest;
}

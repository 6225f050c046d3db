import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import type { Role } from '../../domain/permissions.ts';
import type { AccountRepository, ApiKeyRecord, KeyHasher, UserRecord } from '../ports/account.repository.port.ts';
import type { JwtVerifier } from '../ports/jwt-verifier.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import { makePrincipal, type Principal } from '../ports/principal.ts';
import type { NamespaceRepository } from '../ports/registry.repository.port.ts';
import type { AuditEntry } from './audit.service.ts';
import {
  API_KEY,
  Bounded,
  disabled,
  isJwtShaped,
  RESERVED_USER_NAMES,
  SEGMENT,
  unauthenticated,
  type Checked,
} from './credentials.ts';
import { JwtSignIn } from './jwt-sign-in.ts';

export { apiKeyId, isJwtShaped, RESERVED_USER_NAMES } from './credentials.ts';

/** What a request presents: a bearer token (API key, JWT or the server token) and/or an X-API-Key. */
export interface AuthInput {
  bearer?: string | undefined;
  apiKey?: string | undefined;
  /** The client's address (audit log). */
  client: string;
  /**
   * Whether the check may run the slow hash of a key's secret (scrypt; default true). False: a
   * key whose secret can be checked only that way is refused without it (reason `throttled`); a
   * key verified before by this process costs a SHA-256 and is still checked. A transport's
   * throttle sets it for an address or key id with too many failures.
   */
  slowHash?: boolean | undefined;
  /** Told whether the secret matched, each time the check runs the slow hash (a throttle counts misses). */
  onSlowHash?: ((matched: boolean) => void) | undefined;
}

/**
 * An authenticated principal with what it takes to use it again without reading the account store
 * ({@link AuthService.reuse}).
 */
export interface AuthGrant {
  readonly principal: Principal;
  /** The account store's version before the credential was checked; undefined: never reused. */
  readonly version: number | undefined;
  /** When the credential stops being valid (ms since the epoch); undefined: it does not expire. */
  readonly expiresAt: number | undefined;
}

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

/** A key just made: the secret is shown this once. */
/** What `key create` takes: a name, an optional expiry, and (administrators) whose key it is. */
export interface NewKeyInput {
  name: string;
  expiresInDays?: number | undefined;
  expiresAt?: string | undefined;
  user?: string | undefined;
}

export interface NewKey {
  id: string;
  key: string;
  name: string;
  user: string;
  expiresAt?: string | undefined;
}

export interface UserView {
  name: string;
  displayName?: string | undefined;
  admin: boolean;
  defaultNamespace: string;
  createdAt: string;
  disabledAt?: string | undefined;
  externalId?: string | undefined;
}

export interface WhoAmI {
  user: string;
  displayName?: string | undefined;
  admin: boolean;
  kind: Principal['kind'];
  credential?: string | undefined;
  defaultNamespace: string;
  namespace: string;
  namespaces: Array<{ name: string; role: Role }>;
}

export interface AuthServiceDeps {
  accounts: AccountRepository;
  hasher: KeyHasher;
  /** Namespaces a JWT's roles claim may name (it exists; whose personal namespace it is). */
  namespaces: Pick<NamespaceRepository, 'get' | 'defaultFor'>;
  audit: { record(entry: AuditEntry): Promise<void> };
  logger: Logger;
  /** Verifies bearer JWTs (absent: the server accepts API keys only). */
  jwt?: JwtVerifier | undefined;
  now?: () => number;
  /** Verified keys remembered (default 10,000): the slow hash runs once per key per process. */
  cacheSize?: number;
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** The bootstrap administrator, made on a server's first start. */
export const BOOTSTRAP_ADMIN = 'admin';
export const SERVER_TOKEN_KEY_NAME = 'server-token';
const TOUCH_EVERY_MS = 60_000;
const MAX_KEY_DAYS = 3650;
const LOCAL_MODE_HINT = 'run `agents serve` for a server, then `agents login --server URL`';

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The lookup id of a legacy server token (any other string presented as a bearer token). */
export function serverTokenId(token: string): string {
  return serverTokenIdOf(sha256(token));
}

const serverTokenIdOf = (digest: Buffer): string => `st_${digest.toString('hex', 0, 8)}`;

/**
 * Server-mode accounts (`facade.accounts`): turns credentials into principals, and manages users
 * and their API keys. A key's row is read on every request, so revoking it, its expiry or its
 * user being disabled takes effect on the next request; only the slow hash is cached.
 */
export class AuthService {
  private readonly verified: Bounded<{ stored: string; digest: Buffer }>;
  private readonly loggedIn: Bounded<true>;
  /** Bearer JWTs of the OIDC issuer (absent: the server accepts API keys only). */
  private readonly jwt: JwtSignIn | undefined;
  private readonly touched: Bounded<number>;
  private readonly now: () => number;

  readonly users: {
    add(
      input: { name: string; displayName?: string | undefined; admin?: boolean | undefined },
      by: Principal,
    ): Promise<{ user: UserView; key: NewKey }>;
    list(by: Principal): Promise<{ users: UserView[] }>;
    disable(name: string, by: Principal): Promise<UserView>;
    enable(name: string, by: Principal): Promise<UserView>;
  };

  readonly keys: {
    create(input: NewKeyInput, by: Principal): Promise<NewKey>;
    list(input: { user?: string | undefined }, by: Principal): Promise<{ keys: KeyView[] }>;
    revoke(id: string, by: Principal): Promise<KeyView>;
  };

  private readonly deps: AuthServiceDeps;

  constructor(deps: AuthServiceDeps) {
    this.deps = deps;
    const size = deps.cacheSize ?? 10_000;
    this.verified = new Bounded(size);
    this.loggedIn = new Bounded(size);
    this.touched = new Bounded(size);
    this.now = deps.now ?? Date.now;
    this.jwt = deps.jwt
      ? new JwtSignIn({
          jwt: deps.jwt,
          accounts: deps.accounts,
          namespaces: deps.namespaces,
          audit: deps.audit,
          logger: deps.logger,
          now: this.now,
          cacheSize: size,
        })
      : undefined;
    this.users = {
      add: (input, by) => this.addUser(input, by),
      list: (by) => this.listUsers(by),
      disable: (name, by) => this.setDisabled(name, true, by),
      enable: (name, by) => this.setDisabled(name, false, by),
    };
    this.keys = {
      create: (input, by) => this.createKey(input, by),
      list: (input, by) => this.listKeys(input, by),
      revoke: (id, by) => this.revokeKey(id, by),
    };
  }

  /** The principal the credentials stand for, or AppError UNAUTHENTICATED saying why not. */
  async authenticate(input: AuthInput): Promise<Principal> {
    return (await this.grant(input)).principal;
  }

  /**
   * {@link authenticate}, with what it takes to use the answer again ({@link reuse}): a transport
   * may keep it for a connection and skip the key's reads and hashes while nothing changed.
   */
  async grant(input: AuthInput): Promise<AuthGrant> {
    // Read before the credential: a change made while it is checked makes the grant stale at once.
    const version = this.deps.accounts.authVersion?.();
    const presented = input.apiKey ?? input.bearer;
    try {
      if (presented === undefined || presented === '')
        throw new AppError(
          'UNAUTHENTICATED',
          'Authentication required: send Authorization: Bearer <API key> (or X-API-Key: <API key>)',
          {
            hint: 'log in with `agents login --server URL`, or pass --token; an administrator makes keys with `agents key create`',
            details: { reason: 'missing' },
          },
        );
      const checked =
        input.apiKey === undefined && isJwtShaped(presented)
          ? await this.fromJwt(presented, input.client)
          : await this.fromKey(presented, input);
      const { principal } = checked;
      if (principal.credential !== undefined && !this.loggedIn.has(principal.credential)) {
        this.loggedIn.set(principal.credential, true);
        await this.deps.audit.record({ event: 'auth.login', by: principal, outcome: 'ok', client: input.client });
      }
      return { principal, version: checked.reusable ? version : undefined, expiresAt: checked.expiresAt };
    } catch (err) {
      const reason =
        err instanceof AppError
          ? typeof err.details['reason'] === 'string'
            ? err.details['reason']
            : err.message
          : 'error';
      await this.deps.audit.record({
        event: 'auth.refused',
        outcome: 'refused',
        client: input.client,
        ...(err instanceof AppError && typeof err.details['credential'] === 'string'
          ? { credential: err.details['credential'] }
          : {}),
        ...(err instanceof AppError && typeof err.details['user'] === 'string'
          ? { principal: err.details['user'] }
          : {}),
        details: { reason, ...(err instanceof AppError ? { message: err.message } : {}) },
      });
      if (err instanceof AppError) throw err;
      this.deps.logger.error({ err }, 'authenticating a request failed');
      throw new AppError('UNAVAILABLE', 'Authentication is unavailable: the account store could not be read', {
        hint: 'try again; the server log has the cause',
      });
    }
  }

  /**
   * The principal of a grant, if the same credentials would give it now: nothing in the account
   * store changed since (no key revoked, replaced or expired by hand, no user disabled, no
   * membership or namespace changed — in this process or another) and the credential has not
   * expired. Otherwise undefined: authenticate again. Synchronous, so a reused grant costs no reads.
   */
  reuse(grant: AuthGrant): Principal | undefined {
    if (grant.version === undefined || this.deps.accounts.authVersion?.() !== grant.version) return undefined;
    if (grant.expiresAt !== undefined && grant.expiresAt <= this.now()) return undefined;
    const { principal } = grant;
    if (principal.kind === 'key' && principal.credential !== undefined) this.touch(principal.credential);
    return principal;
  }

  private async fromKey(presented: string, opts: Pick<AuthInput, 'slowHash' | 'onSlowHash'>): Promise<Checked> {
    const m = API_KEY.exec(presented);
    const secret = m ? m[2]! : presented;
    // A server token's lookup id is a prefix of its secret's digest: one SHA-256 serves both.
    const digest = sha256(secret);
    const id = m ? m[1]! : serverTokenIdOf(digest);
    const found = await this.deps.accounts.lookupKey(id);
    // Made only when refused: an error captures a stack trace, a visible cost on every request.
    const wrong = (): AppError =>
      unauthenticated(
        'the API key is not valid (unknown or wrong key)',
        'check the key you passed with --token, CLEVERAGENTS_SERVER_TOKEN or `agents login`; see your keys with `agents key list`',
        'unknown or wrong key',
      );
    if (!found) throw wrong();
    if (!(await this.secretMatches(found.key, secret, digest, opts))) throw wrong();
    const { key, user, roles } = found;
    const who = { credential: key.id, user: user.name };
    if (key.revokedAt !== undefined)
      throw new AppError(
        'UNAUTHENTICATED',
        `Authentication failed: the API key ${key.id} was revoked at ${key.revokedAt}`,
        {
          hint: 'make a new key with `agents key create` (or ask an administrator)',
          details: { reason: 'revoked', ...who },
        },
      );
    if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= this.now())
      throw new AppError(
        'UNAUTHENTICATED',
        `Authentication failed: the API key ${key.id} expired at ${key.expiresAt}`,
        {
          hint: 'make a new key with `agents key create` (or ask an administrator)',
          details: { reason: 'expired', ...who },
        },
      );
    if (user.disabledAt !== undefined) throw disabled(user, key.id);
    this.touch(key.id);
    const principal = makePrincipal({
      id: user.name,
      kind: 'key',
      roles,
      admin: user.admin,
      defaultNamespace: user.defaultNamespace,
      credential: key.id,
    });
    return {
      principal,
      reusable: true,
      expiresAt: key.expiresAt === undefined ? undefined : Date.parse(key.expiresAt),
    };
  }

  /**
   * The slow hash once per key per process; afterwards a SHA-256 of the secret is compared. An
   * unknown id never gets here: refusing it costs one indexed read and no hash.
   */
  private async secretMatches(
    key: ApiKeyRecord,
    secret: string,
    digest: Buffer,
    opts: Pick<AuthInput, 'slowHash' | 'onSlowHash'>,
  ): Promise<boolean> {
    const cached = this.verified.get(key.id);
    if (cached && cached.stored === key.hash) return timingSafeEqual(cached.digest, digest);
    if (opts.slowHash === false)
      throw new AppError(
        'UNAUTHENTICATED',
        'Authentication failed: too many failed attempts with this key; try again later',
        {
          hint: 'check the key you passed with --token, CLEVERAGENTS_SERVER_TOKEN or `agents login`',
          details: { reason: 'throttled', credential: key.id },
        },
      );
    const matched = await this.deps.hasher.verify(secret, key.hash);
    opts.onSlowHash?.(matched);
    if (!matched) return false;
    this.verified.set(key.id, { stored: key.hash, digest });
    return true;
  }

  private touch(id: string): void {
    const now = this.now();
    const last = this.touched.get(id);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    this.touched.set(id, now);
    this.deps.accounts
      .touchKey(id, new Date(now).toISOString())
      .catch((err: unknown) => this.deps.logger.warn({ err, key: id }, 'recording when a key was used failed'));
  }

  private async fromJwt(token: string, client: string): Promise<Checked> {
    if (!this.jwt)
      throw unauthenticated(
        'this server accepts API keys only (no OIDC issuer is configured)',
        'use an API key (`agents key create`), or ask the administrator to configure OIDC',
        'jwt not accepted',
      );
    return this.jwt.check(token, client);
  }

  /**
   * On every start: the first start makes the administrator `admin` (an owner of `local/`); then
   * the server token becomes admin's key `server-token` (the previous one is replaced).
   */
  async ensureServerToken(token: string): Promise<{ user: string; created: boolean }> {
    let created = false;
    let admin = await this.deps.accounts.getUser(BOOTSTRAP_ADMIN);
    if (!admin && (await this.deps.accounts.countUsers()) === 0) {
      admin = { name: BOOTSTRAP_ADMIN, admin: true, defaultNamespace: 'local', createdAt: this.iso() };
      await this.deps.accounts.createUser(admin, { joinExisting: true });
      created = true;
      await this.deps.audit.record({
        event: 'user.created',
        principal: BOOTSTRAP_ADMIN,
        target: BOOTSTRAP_ADMIN,
        outcome: 'ok',
        details: { admin: true, via: 'first start' },
      });
    }
    admin ??= (await this.deps.accounts.listUsers()).find((u) => u.admin && u.disabledAt === undefined);
    if (!admin) throw new Error('no administrator to hold the server token (every administrator is disabled)');
    const id = serverTokenId(token);
    const existing = await this.deps.accounts.getKey(id);
    if (!existing || existing.user !== admin.name || existing.revokedAt !== undefined)
      await this.deps.accounts.replaceKey({
        id,
        user: admin.name,
        name: SERVER_TOKEN_KEY_NAME,
        hash: await this.deps.hasher.hash(token),
        createdAt: this.iso(),
      });
    return { user: admin.name, created };
  }

  /** Who the caller is, where the request acts, and their namespaces. */
  async whoami(principal: Principal): Promise<WhoAmI> {
    const user =
      principal.kind === 'key' || principal.kind === 'jwt' ? await this.deps.accounts.getUser(principal.id) : undefined;
    return {
      user: principal.id,
      ...(user?.displayName !== undefined ? { displayName: user.displayName } : {}),
      admin: principal.admin,
      kind: principal.kind,
      ...(principal.credential !== undefined ? { credential: principal.credential } : {}),
      defaultNamespace: principal.defaultNamespace,
      namespace: principal.namespace,
      namespaces: Object.entries(principal.roles)
        .map(([name, role]) => ({ name, role }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  }

  private async addUser(
    input: { name: string; displayName?: string | undefined; admin?: boolean | undefined },
    by: Principal,
  ): Promise<{ user: UserView; key: NewKey }> {
    requireServerAdmin(by, 'add users');
    checkUserName(input.name);
    const user: UserRecord = {
      name: input.name,
      admin: input.admin === true,
      defaultNamespace: input.name,
      createdAt: this.iso(),
      ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
    };
    await this.deps.accounts.createUser(user);
    await this.deps.audit.record({
      event: 'user.created',
      by,
      target: user.name,
      namespace: user.name,
      outcome: 'ok',
      details: { admin: user.admin },
    });
    const key = await this.makeKey(user.name, 'default', undefined, by);
    return { user: userView(user), key };
  }

  private async listUsers(by: Principal): Promise<{ users: UserView[] }> {
    requireServerAdmin(by, 'list users');
    return { users: (await this.deps.accounts.listUsers()).map(userView) };
  }

  private async setDisabled(name: string, disable: boolean, by: Principal): Promise<UserView> {
    requireServerAdmin(by, disable ? 'disable users' : 'enable users');
    if (name === by.id)
      throw new AppError('INVALID_STATE', `You cannot ${disable ? 'disable' : 'enable'} yourself`, {
        hint: 'ask another administrator',
      });
    const user = await this.deps.accounts.getUser(name);
    if (!user)
      throw new AppError('NOT_FOUND', `User ${name} was not found`, {
        details: { entity: 'user', name },
        hint: 'see the users with `agents user list`',
      });
    const at = disable ? (user.disabledAt ?? this.iso()) : undefined;
    if ((user.disabledAt !== undefined) !== disable) {
      await this.deps.accounts.setDisabled(name, at);
      await this.deps.audit.record({
        event: disable ? 'user.disabled' : 'user.enabled',
        by,
        target: name,
        outcome: 'ok',
      });
    }
    const { disabledAt: _, ...rest } = user;
    return userView(at !== undefined ? { ...rest, disabledAt: at } : rest);
  }

  private async createKey(input: NewKeyInput, by: Principal): Promise<NewKey> {
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
    if (input.expiresInDays !== undefined && input.expiresAt !== undefined)
      throw new AppError('INVALID_PARAMS', 'Give expiresInDays or expiresAt, not both', {
        fields: [{ field: 'expiresAt', description: 'cannot be combined with expiresInDays' }],
      });
    let expiresAt: string | undefined;
    if (input.expiresInDays !== undefined) {
      if (!Number.isInteger(input.expiresInDays) || input.expiresInDays < 1 || input.expiresInDays > MAX_KEY_DAYS)
        throw new AppError('INVALID_PARAMS', `expiresInDays must be a whole number from 1 to ${MAX_KEY_DAYS}`, {
          fields: [{ field: 'expiresInDays', description: `1 to ${MAX_KEY_DAYS}` }],
        });
      expiresAt = new Date(this.now() + input.expiresInDays * 86_400_000).toISOString();
    } else if (input.expiresAt !== undefined) {
      const t = Date.parse(input.expiresAt);
      if (Number.isNaN(t) || t <= this.now())
        throw new AppError('INVALID_PARAMS', 'expiresAt must be an instant in the future', {
          fields: [{ field: 'expiresAt', description: 'an ISO 8601 instant in the future' }],
        });
      expiresAt = new Date(t).toISOString();
    }
    return this.makeKey(owner, input.name, expiresAt, by);
  }

  private async makeKey(user: string, name: string, expiresAt: string | undefined, by: Principal): Promise<NewKey> {
    let id = '';
    for (let i = 0; i < 12; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
    id = `ca_${id}`;
    const secret = randomBytes(32).toString('base64url');
    const key = `${id}_${secret}`;
    const record: ApiKeyRecord = {
      id,
      user,
      name,
      hash: await this.deps.hasher.hash(secret),
      createdAt: this.iso(),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    };
    await this.deps.accounts.createKey(record);
    await this.deps.audit.record({
      event: 'key.created',
      by,
      target: id,
      outcome: 'ok',
      details: { user, name, ...(expiresAt !== undefined ? { expiresAt } : {}) },
    });
    return { id, key, name, user, ...(expiresAt !== undefined ? { expiresAt } : {}) };
  }

  private async listKeys(input: { user?: string | undefined }, by: Principal): Promise<{ keys: KeyView[] }> {
    requireServerMode(by);
    const user = input.user ?? by.id;
    if (user !== by.id) requireServerAdmin(by, "list other users' keys");
    return { keys: (await this.deps.accounts.listKeys(user)).map(keyView) };
  }

  private async revokeKey(id: string, by: Principal): Promise<KeyView> {
    requireServerMode(by);
    const key = await this.deps.accounts.getKey(id);
    // Someone else's key looks exactly like a missing one (unless you are an administrator).
    if (!key || (key.user !== by.id && !by.admin))
      throw new AppError('NOT_FOUND', `API key ${id} was not found`, {
        details: { entity: 'key', name: id },
        hint: 'see your keys with `agents key list`',
      });
    if (key.revokedAt !== undefined) return keyView(key);
    const at = this.iso();
    await this.deps.accounts.revokeKey(id, at);
    this.verified.delete(id);
    await this.deps.audit.record({ event: 'key.revoked', by, target: id, outcome: 'ok', details: { user: key.user } });
    return keyView({ ...key, revokedAt: at });
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}

function requireServerMode(by: Principal): void {
  if (by.kind === 'local')
    throw new AppError(
      'UNSUPPORTED_OPERATION',
      'local mode has one user and no keys; run `agents serve` for a server',
      { hint: LOCAL_MODE_HINT },
    );
}

function requireServerAdmin(by: Principal, what: string): void {
  requireServerMode(by);
  if (!by.admin)
    throw new AppError('FORBIDDEN', `Only server administrators may ${what}`, {
      hint: 'ask a server administrator (see `agents whoami`)',
    });
}

/** User names follow the namespace-name rules (the user's namespace is named after them). */
export function checkUserName(name: string): void {
  if (!SEGMENT.test(name))
    throw new AppError('INVALID_PARAMS', `The user name ${JSON.stringify(name.slice(0, 80))} is not valid`, {
      fields: [
        { field: 'name', description: 'lowercase letters, digits, - and _, starting with a letter (at most 63)' },
      ],
    });
  if (RESERVED_USER_NAMES.includes(name))
    throw new AppError('INVALID_PARAMS', `The user name ${name} is reserved`, {
      fields: [{ field: 'name', description: `not one of ${RESERVED_USER_NAMES.join(', ')}` }],
      hint: 'pick another name',
    });
}

function userView(u: UserRecord): UserView {
  return {
    name: u.name,
    admin: u.admin,
    defaultNamespace: u.defaultNamespace,
    createdAt: u.createdAt,
    ...(u.displayName !== undefined ? { displayName: u.displayName } : {}),
    ...(u.disabledAt !== undefined ? { disabledAt: u.disabledAt } : {}),
    ...(u.externalId !== undefined ? { externalId: u.externalId } : {}),
  };
}

function keyView(k: ApiKeyRecord): KeyView {
  const { hash: _hash, ...rest } = k;
  return rest;
}

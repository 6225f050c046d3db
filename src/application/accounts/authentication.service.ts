import { timingSafeEqual } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import type { AccountRepository, ApiKeyRecord, KeyHasher } from '../ports/account.repository.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import { makePrincipal, type Principal } from '../ports/principal.ts';
import type { AuditRecorder } from './audit.service.ts';
import {
  API_KEY,
  Bounded,
  disabled,
  isJwtShaped,
  serverTokenIdOf,
  sha256,
  unauthenticated,
  type Checked,
} from './credential-formats.ts';
import type { JwtSignIn } from './jwt-sign-in.service.ts';

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
 * ({@link AuthenticationService.reuse}).
 */
export interface AuthGrant {
  readonly principal: Principal;
  /** The account store's version before the credential was checked; undefined: never reused. */
  readonly version: number | undefined;
  /** When the credential stops being valid (ms since the epoch); undefined: it does not expire. */
  readonly expiresAt: number | undefined;
}

export interface AuthenticationServiceDeps {
  accounts: Pick<AccountRepository, 'authVersion' | 'lookupKey' | 'touchKey'>;
  hasher: Pick<KeyHasher, 'verify'>;
  audit: AuditRecorder;
  logger: Logger;
  /** Signs in bearer JWTs of the OIDC issuer (absent: the server accepts API keys only). */
  jwt?: JwtSignIn | undefined;
  now?: () => number;
  /** Verified keys remembered (default 10,000): the slow hash runs once per key per process. */
  cacheSize?: number;
}

const TOUCH_EVERY_MS = 60_000;

/**
 * Server-mode sign-in (`facade.authentication`): turns credentials into principals. A key's row
 * is read on every request, so revoking it, its expiry or its user being disabled takes effect on
 * the next request; only the slow hash is cached.
 */
export class AuthenticationService {
  private readonly verified: Bounded<{ stored: string; digest: Buffer }>;
  private readonly loggedIn: Bounded<true>;
  private readonly touched: Bounded<number>;
  private readonly now: () => number;
  private readonly deps: AuthenticationServiceDeps;

  constructor(deps: AuthenticationServiceDeps) {
    this.deps = deps;
    const size = deps.cacheSize ?? 10_000;
    this.verified = new Bounded(size);
    this.loggedIn = new Bounded(size);
    this.touched = new Bounded(size);
    this.now = deps.now ?? Date.now;
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
    const presented = input.apiKey ?? input.bearer;
    try {
      // Read before the credential: a change made while it is checked makes the grant stale at
      // once. Inside the try: on SQLite it reads the database, and a store that cannot be read is
      // UNAVAILABLE (503), never an internal error nor a failed login.
      const version = this.deps.accounts.authVersion?.();
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
      return this.refused(err, input.client);
    }
  }

  /**
   * The principal of a grant, if the same credentials would give it now: nothing in the account
   * store changed since (no key revoked, replaced or expired by hand, no user disabled, no
   * membership or namespace changed — in this process or another) and the credential has not
   * expired. Otherwise undefined: authenticate again. Synchronous, so a reused grant costs no reads.
   */
  reuse(grant: AuthGrant): Principal | undefined {
    if (grant.version === undefined || this.currentVersion() !== grant.version) return undefined;
    if (grant.expiresAt !== undefined && grant.expiresAt <= this.now()) return undefined;
    const { principal } = grant;
    if (principal.kind === 'key' && principal.credential !== undefined) this.touch(principal.credential);
    return principal;
  }

  /** The account store's version, or undefined when it cannot be read (the full check then answers why). */
  private currentVersion(): number | undefined {
    try {
      return this.deps.accounts.authVersion?.();
    } catch {
      return undefined;
    }
  }

  /** Drops what this process remembers of a key's secret (the key was revoked: it is never checked again). */
  forget(keyId: string): void {
    this.verified.delete(keyId);
  }

  /** Audits a refusal, then answers it: the credential's own error, or UNAVAILABLE for a failure. */
  private async refused(err: unknown, client: string): Promise<never> {
    const reason =
      err instanceof AppError
        ? typeof err.details['reason'] === 'string'
          ? err.details['reason']
          : err.message
        : 'error';
    await this.deps.audit.record({
      event: 'auth.refused',
      outcome: 'refused',
      client,
      ...(err instanceof AppError && typeof err.details['credential'] === 'string'
        ? { credential: err.details['credential'] }
        : {}),
      ...(err instanceof AppError && typeof err.details['user'] === 'string' ? { principal: err.details['user'] } : {}),
      details: { reason, ...(err instanceof AppError ? { message: err.message } : {}) },
    });
    if (err instanceof AppError) throw err;
    this.deps.logger.error({ err }, 'authenticating a request failed');
    throw new AppError('UNAVAILABLE', 'Authentication is unavailable: the account store could not be read', {
      hint: 'try again; the server log has the cause',
    });
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
    if (!this.deps.jwt)
      throw unauthenticated(
        'this server accepts API keys only (no OIDC issuer is configured)',
        'use an API key (`agents key create`), or ask the administrator to configure OIDC',
        'jwt not accepted',
      );
    return this.deps.jwt.check(token, client);
  }
}

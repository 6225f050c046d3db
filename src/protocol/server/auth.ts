import { apiKeyId, isJwtShaped, type AuthGrant, type Principal, type ServiceFacade } from '../../application/index.ts';
import { AppError, isAppError } from '../../domain/errors.ts';

/** What a request presents: its Authorization header (Bearer …) and/or X-API-Key header. */
export interface Credentials {
  authorization?: string | undefined;
  apiKey?: string | undefined;
  /** The client's address (for the audit log and throttling). */
  client: string;
  /**
   * Set by the throttle ({@link authenticateRequest}): false when the check may not run the slow
   * hash of a key's secret (an authenticator without one ignores it).
   */
  slowHash?: boolean | undefined;
  /** Told whether the secret matched, each time the check runs the slow hash. */
  onSlowHash?: ((matched: boolean) => void) | undefined;
}

/** Turns request credentials into a principal, or refuses them (AppError UNAUTHENTICATED). */
export interface Authenticator {
  /**
   * `connection`: what the request came over (an HTTP keep-alive socket); the same credentials on
   * the same connection may be answered from an earlier check while it still holds.
   */
  authenticate(credentials: Credentials, connection?: object): Promise<Principal>;
}

/** The credentials a connection last authenticated with, exactly as presented, and their grant. */
interface ConnectionAuth {
  authorization: string | undefined;
  apiKey: string | undefined;
  grant: AuthGrant;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The shortest server token accepted (a shorter one is refused at start-up). */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Server mode's authenticator: the Authorization bearer (an API key, a JWT or the server token) or
 * the X-API-Key header, checked by the authentication service (`facade.authentication.grant`).
 */
export class FacadeAuthenticator implements Authenticator {
  /** Per connection, so a grant never outlives its socket nor serves another client. */
  private readonly byConnection = new WeakMap<object, ConnectionAuth>();

  private readonly authentication: Pick<ServiceFacade['authentication'], 'grant' | 'reuse'>;

  constructor(authentication: Pick<ServiceFacade['authentication'], 'grant' | 'reuse'>) {
    this.authentication = authentication;
  }

  /**
   * A keep-alive client sends the same header with every request: its key's reads and hashes are
   * done once while the account store stays unchanged ({@link ServiceFacade.authentication.reuse}). Any
   * other header, on the same connection too, is checked in full.
   */
  async authenticate(credentials: Credentials, connection?: object): Promise<Principal> {
    const { authorization, apiKey } = credentials;
    const known = connection && this.byConnection.get(connection);
    if (known && known.authorization === authorization && known.apiKey === apiKey) {
      const principal = this.authentication.reuse(known.grant);
      if (principal) return principal;
    }
    const grant = await this.check(credentials);
    if (connection) {
      if (grant.version === undefined) this.byConnection.delete(connection);
      else this.byConnection.set(connection, { authorization, apiKey, grant });
    }
    return grant.principal;
  }

  private async check({ authorization, apiKey, client, slowHash, onSlowHash }: Credentials): Promise<AuthGrant> {
    let bearer: string | undefined;
    if (authorization !== undefined && authorization !== '') {
      const m = BEARER.exec(authorization);
      if (!m)
        throw new AppError('UNAUTHENTICATED', 'Authentication failed: the Authorization header must be Bearer <key>', {
          hint: 'send Authorization: Bearer <API key>, or X-API-Key: <API key>',
        });
      bearer = m[1];
    }
    const key = apiKey?.trim();
    return this.authentication.grant({ bearer, apiKey: key === '' ? undefined : key, client, slowHash, onSlowHash });
  }
}

/**
 * What a request presents, told apart before anything is read: an API key (by its public id), a
 * JWT (by its unverified issuer and subject: whom it claims to be), or anything else — the server
 * token (the one credential a person chooses) or a malformed Authorization header. Undefined: no
 * credential at all (refused, but not a guess).
 */
export type Presented = { kind: 'key'; id: string } | { kind: 'jwt'; id: string } | { kind: 'other' };

const OTHER: Presented = { kind: 'other' };

/** A JWT's claimed issuer and subject, unverified (it only names the throttle's counter), bounded in length. */
function jwtIdOf(token: string): string {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as unknown;
    if (typeof claims === 'object' && claims !== null) {
      const { iss, sub } = claims as { iss?: unknown; sub?: unknown };
      return `${String(iss).slice(0, 200)} ${String(sub).slice(0, 200)}`;
    }
  } catch {
    // Not JSON: refused by the signature check; all such tokens share one counter.
  }
  return '?';
}

/** Reads the credential as the authentication service will ({@link FacadeAuthenticator}): X-API-Key first. */
export function presentedOf({ authorization, apiKey }: Credentials): Presented | undefined {
  const key = apiKey?.trim();
  let bearer: string | undefined;
  if (authorization !== undefined && authorization !== '') {
    const m = BEARER.exec(authorization);
    if (!m) return OTHER;
    bearer = m[1];
  }
  const viaApiKey = key !== undefined && key !== '';
  const presented = viaApiKey ? key : bearer;
  if (presented === undefined || presented === '') return undefined;
  const id = apiKeyId(presented);
  if (id !== undefined) return { kind: 'key', id };
  return !viaApiKey && isJwtShaped(presented) ? { kind: 'jwt', id: jwtIdOf(presented) } : OTHER;
}

export interface AuthThrottleOptions {
  /**
   * Refusals allowed per address and credential within a window (default 10;
   * CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE).
   */
  maxFailures?: number;
  /** Wrong secrets that cost the slow hash allowed per address, all key ids together (default 3 × maxFailures). */
  maxSlowHashes?: number;
  /** The window, in milliseconds (default one minute). */
  windowMs?: number;
  /** Counters remembered at most (default 10,000): memory stays bounded whatever the traffic. */
  maxEntries?: number;
  now?: () => number;
}

/** What the throttle allows one request: see {@link AuthThrottle.admit}. */
export interface Admission {
  /** > 0: refuse the credential without checking it, and retry after that many seconds. */
  readonly refuse: number;
  /** Whether the check may run the slow hash of a key's secret. */
  readonly slowHash: boolean;
  /** > 0: a limit is reached; a refusal is answered 429 with this Retry-After (seconds). */
  readonly retryAfter: number;
}

const OPEN: Admission = Object.freeze({ refuse: 0, slowHash: true, retryAfter: 0 });

interface FailureWindow {
  count: number;
  resetAt: number;
}

/** The counter of refusals of one credential from one address. */
function credentialCounter(client: string, presented: Presented): string {
  if (presented.kind === 'key') return `k ${client} ${presented.id}`;
  if (presented.kind === 'jwt') return `j ${client} ${presented.id}`;
  return `t ${client}`;
}

/**
 * Failed authentications, in fixed windows, counted so that an attacker can neither guess his
 * way in, nor make the server hash without bound, nor lock out someone who shares his address
 * (a NAT, a proxy) and holds a valid credential:
 *
 * - **Per address and credential**: an API key by its public id, a JWT by the issuer and subject
 *   it claims, anything else (the server token, a malformed header) as one. Past `maxFailures`
 *   refusals of a credential from an address, that credential's refusals from there are answered
 *   429 (one message for every reason, so nothing is learnt about a key id) until the window ends;
 *   other credentials from the address are counted apart. Keys and JWTs are still checked: a key's
 *   secret is 256 random bits and a JWT is signed, so checking them helps no guesser, and a valid
 *   one is accepted. The server token is the one credential a person chooses, the one worth
 *   guessing: past the limit of guesses at it from an address it is refused there unchecked — the
 *   only valid credential the throttle can refuse. A success resets a key's or JWT's own counter
 *   (only its holder can), not the server token's (a guesser holding it needs no guess).
 * - **Per address, wrong secrets that cost the slow hash** (scrypt), all key ids together: past
 *   `maxSlowHashes` a key from the address is checked only where no slow hash is needed — a key
 *   this process verified before is compared by its SHA-256, so its owner keeps working — and any
 *   other is refused without hashing: an attacker with many key ids (his own keys count) cannot
 *   make the server hash more than that per window. This bounds cost, not guesses.
 *
 * An unknown key id or a malformed key costs one indexed read and no hash (the authentication service
 * refuses it before hashing), and a JWT a signature check. A request without credentials is
 * refused but is not a guess; a store outage or an unreachable issuer is not a failed login (the
 * caller decides: {@link authenticateRequest}). Memory is bounded: counters expire with their
 * window and at most `maxEntries` are kept (the least recently bumped makes room).
 */
export class AuthThrottle {
  private readonly entries = new Map<string, FailureWindow>();
  private readonly maxFailures: number;
  private readonly maxSlowHashes: number;
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(opts: AuthThrottleOptions = {}) {
    this.maxFailures = opts.maxFailures ?? 10;
    this.maxSlowHashes = opts.maxSlowHashes ?? 3 * this.maxFailures;
    this.windowMs = opts.windowMs ?? 60_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** How a credential from this address may be checked now. */
  admit(client: string, presented: Presented): Admission {
    if (this.entries.size === 0) return OPEN;
    const now = this.now();
    const own = this.wait(credentialCounter(client, presented), this.maxFailures, now);
    if (presented.kind === 'other' && own > 0) return { refuse: own, slowHash: false, retryAfter: own };
    const hashes = presented.kind === 'key' ? this.wait(`h ${client}`, this.maxSlowHashes, now) : 0;
    const retryAfter = Math.max(own, hashes);
    return retryAfter === 0 ? OPEN : { refuse: 0, slowHash: hashes === 0, retryAfter };
  }

  /** A refused credential; `wrongHash`: its check ran the slow hash and the secret did not match. */
  failed(client: string, presented: Presented, wrongHash: boolean): void {
    const now = this.now();
    this.bump(credentialCounter(client, presented), now);
    if (wrongHash) this.bump(`h ${client}`, now);
  }

  /** A valid credential: a key's or JWT's own counter starts afresh (the server token's does not). */
  succeeded(client: string, presented: Presented): void {
    if (this.entries.size > 0 && presented.kind !== 'other') this.entries.delete(credentialCounter(client, presented));
  }

  /** Counters held. */
  get size(): number {
    return this.entries.size;
  }

  /** Seconds until the counter's window ends when it reached the limit, else 0 (an expired one goes). */
  private wait(key: string, limit: number, now: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    if (now >= e.resetAt) {
      this.entries.delete(key);
      return 0;
    }
    return e.count >= limit ? Math.max(1, Math.ceil((e.resetAt - now) / 1000)) : 0;
  }

  private bump(key: string, now: number): void {
    const e = this.entries.get(key);
    this.entries.delete(key);
    // Re-inserted: the order of the map is the order of last use, so a flood of new counters
    // evicts idle ones before those still being bumped.
    if (e && now < e.resetAt) {
      e.count++;
      this.entries.set(key, e);
      return;
    }
    if (this.entries.size >= this.maxEntries) this.makeRoom(now);
    this.entries.set(key, { count: 1, resetAt: now + this.windowMs });
  }

  private makeRoom(now: number): void {
    // The least recently bumped come first, and are mostly the expired ones.
    for (const [k, v] of this.entries) {
      if (this.entries.size < this.maxEntries) return;
      if (now >= v.resetAt) this.entries.delete(k);
      else break;
    }
    const oldest = this.entries.keys().next();
    if (this.entries.size >= this.maxEntries && !oldest.done) this.entries.delete(oldest.value);
  }
}

/** Refusals made by the throttle (answered 429 with Retry-After), told apart from all others. */
const THROTTLED = new WeakMap<AppError, number>();

function throttled(wait: number): AppError {
  const err = new AppError(
    'UNAUTHENTICATED',
    `Too many failed authentication attempts with this credential from this address; retry in ${wait} s`,
    {
      details: { retryAfterSeconds: wait },
      hint: 'check the credential; a valid API key or JWT is still accepted meanwhile, and other credentials are counted apart',
    },
  );
  THROTTLED.set(err, wait);
  return err;
}

/** The Retry-After (seconds) of a refusal the throttle made, else undefined. */
export function throttledFor(err: unknown): number | undefined {
  return isAppError(err) ? THROTTLED.get(err) : undefined;
}

/**
 * Authenticates a request under the throttle ({@link AuthThrottle}; null: none). Rejects with the
 * authenticator's error, or with a throttled refusal ({@link throttledFor} gives its Retry-After).
 * Only a refused credential (UNAUTHENTICATED) counts as a failure: a store that cannot be read or
 * an issuer that cannot be reached (UNAVAILABLE) is passed on uncounted.
 */
export async function authenticateRequest(
  auth: Authenticator,
  throttle: AuthThrottle | null,
  credentials: Credentials,
  connection?: object,
): Promise<Principal> {
  const presented = throttle ? presentedOf(credentials) : undefined;
  if (!throttle || !presented) return auth.authenticate(credentials, connection);
  const { client } = credentials;
  const admission = throttle.admit(client, presented);
  if (admission.refuse > 0) throw throttled(admission.refuse);
  let wrongHash = false;
  let principal: Principal;
  try {
    principal = await auth.authenticate(
      {
        ...credentials,
        slowHash: admission.slowHash,
        onSlowHash: (matched) => {
          if (!matched) wrongHash = true;
        },
      },
      connection,
    );
  } catch (err) {
    if (!isAppError(err) || err.reason !== 'UNAUTHENTICATED') throw err;
    throttle.failed(client, presented, wrongHash);
    // Under a limit every refusal reads the same: it tells nothing of whether a key id exists.
    if (admission.retryAfter > 0) throw throttled(admission.retryAfter);
    throw err;
  }
  throttle.succeeded(client, presented);
  return principal;
}

import type { AuthGrant, Principal, ServiceFacade } from '../../application/index.js';
import { AppError } from '../../domain/errors.js';

/** What a request presents: its Authorization header (Bearer …) and/or X-API-Key header. */
export interface Credentials {
  authorization?: string | undefined;
  apiKey?: string | undefined;
  /** The client's address (for the audit log and throttling). */
  client: string;
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

/** The shortest server token accepted (a shorter one is refused at start-up). */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Server mode's authenticator: the Authorization bearer (an API key, a JWT or the server token) or
 * the X-API-Key header, checked by the accounts service (`facade.accounts.authenticate`).
 */
export class FacadeAuthenticator implements Authenticator {
  /** Per connection, so a grant never outlives its socket nor serves another client. */
  private readonly byConnection = new WeakMap<object, ConnectionAuth>();

  constructor(private readonly accounts: Pick<ServiceFacade['accounts'], 'grant' | 'reuse'>) {}

  /**
   * A keep-alive client sends the same header with every request: its key's reads and hashes are
   * done once while the account store stays unchanged ({@link ServiceFacade.accounts.reuse}). Any
   * other header, on the same connection too, is checked in full.
   */
  async authenticate(credentials: Credentials, connection?: object): Promise<Principal> {
    const { authorization, apiKey } = credentials;
    const known = connection && this.byConnection.get(connection);
    if (known && known.authorization === authorization && known.apiKey === apiKey) {
      const principal = this.accounts.reuse(known.grant);
      if (principal) return principal;
    }
    const grant = await this.check(credentials);
    if (connection) {
      if (grant.version === undefined) this.byConnection.delete(connection);
      else this.byConnection.set(connection, { authorization, apiKey, grant });
    }
    return grant.principal;
  }

  private async check({ authorization, apiKey, client }: Credentials): Promise<AuthGrant> {
    let bearer: string | undefined;
    if (authorization !== undefined && authorization !== '') {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!m)
        throw new AppError('UNAUTHENTICATED', 'Authentication failed: the Authorization header must be Bearer <key>', {
          hint: 'send Authorization: Bearer <API key>, or X-API-Key: <API key>',
        });
      bearer = m[1];
    }
    const key = apiKey?.trim();
    return this.accounts.grant({ bearer, apiKey: key === '' ? undefined : key, client });
  }
}

export interface AuthThrottleOptions {
  /** Failures allowed per client within one window (default 10). */
  maxFailures?: number;
  /** The window, in milliseconds (default one minute). */
  windowMs?: number;
  /** Clients remembered at most (default 10,000): memory stays bounded whatever the traffic. */
  maxClients?: number;
  now?: () => number;
}

interface FailureWindow {
  count: number;
  resetAt: number;
}

/**
 * Failed authentications per client (remote address), in fixed windows: after `maxFailures` in a
 * window the client is refused without its token being checked until the window ends. Entries
 * expire with their window; when the table is full the oldest entry makes room.
 */
export class AuthThrottle {
  private readonly entries = new Map<string, FailureWindow>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(opts: AuthThrottleOptions = {}) {
    this.maxFailures = opts.maxFailures ?? 10;
    this.windowMs = opts.windowMs ?? 60_000;
    this.maxClients = opts.maxClients ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** Seconds the client must wait before trying again, or 0 when it may try now. */
  retryAfter(client: string): number {
    if (this.entries.size === 0) return 0;
    const e = this.entries.get(client);
    if (!e) return 0;
    const now = this.now();
    if (now >= e.resetAt) {
      this.entries.delete(client);
      return 0;
    }
    return e.count >= this.maxFailures ? Math.max(1, Math.ceil((e.resetAt - now) / 1000)) : 0;
  }

  failed(client: string): void {
    const now = this.now();
    const e = this.entries.get(client);
    if (e && now < e.resetAt) {
      e.count++;
      return;
    }
    if (e) this.entries.delete(client);
    if (this.entries.size >= this.maxClients) this.makeRoom(now);
    this.entries.set(client, { count: 1, resetAt: now + this.windowMs });
  }

  /** A client that authenticates starts afresh. */
  succeeded(client: string): void {
    if (this.entries.size > 0) this.entries.delete(client);
  }

  get size(): number {
    return this.entries.size;
  }

  private makeRoom(now: number): void {
    // Entries are in insertion order, so the expired ones are mostly at the front.
    for (const [k, v] of this.entries) {
      if (this.entries.size < this.maxClients) return;
      if (now >= v.resetAt) this.entries.delete(k);
      else break;
    }
    const oldest = this.entries.keys().next();
    if (this.entries.size >= this.maxClients && !oldest.done) this.entries.delete(oldest.value);
  }
}

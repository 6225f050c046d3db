import { createHash } from 'node:crypto';
import type * as Jose from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import type { JwtVerifier, VerifiedToken } from '../../application/index.ts';
import { AppError } from '../../domain/errors.ts';
import { ROLES, type Role } from '../../domain/permissions.ts';

/** What the server reads of the issuer's OpenID Connect discovery document. */
export interface OidcDiscovery {
  issuer: string;
  jwksUri: string;
  deviceAuthorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
  /** Where the document was read: the card's oauth2MetadataUrl. */
  metadataUrl: string;
}

export interface JoseJwtVerifierOptions {
  /** The `iss` every token must carry (also where discovery is read when jwksUri is absent). */
  issuer: string;
  /** The `aud` every token must include. */
  audience: string;
  /** The JWKS URL; absent: the discovery document's jwks_uri (read on first use, retried on failure). */
  jwksUri?: string | undefined;
  /** The claim naming the user (default `preferred_username`, falling back to `sub`). */
  userClaim?: string | undefined;
  /** The claim carrying namespace roles: `{namespace: role}` or `["namespace:role", …]`. */
  rolesClaim?: string | undefined;
  /** How long an unknown kid waits before the JWKS is fetched again (ms; default 30 s). */
  cooldownMs?: number | undefined;
  /** How long a JWKS or discovery fetch may take (ms; default 5 s). */
  fetchTimeoutMs?: number | undefined;
  /** Clock skew allowed on exp/nbf (seconds; default 30). */
  clockToleranceSec?: number | undefined;
  /**
   * The longest a token may be valid (seconds, `exp` minus `iat` or now, whichever is earlier;
   * default 24 h): a bearer token that lives for weeks is as good as a password to whoever copies it.
   */
  maxLifetimeSec?: number | undefined;
}

/** The default of {@link JoseJwtVerifierOptions.maxLifetimeSec}: one day. */
export const DEFAULT_MAX_TOKEN_LIFETIME_SEC = 86_400;

/** Asymmetric signatures only: a JWKS never holds a shared secret we would accept. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
const SEGMENT = /^[a-z][a-z0-9_-]{0,62}$/;
const ROLE_SET: ReadonlySet<string> = new Set(ROLES);

const unauthenticated = (message: string, hint?: string, cause?: unknown): AppError =>
  new AppError('UNAUTHENTICATED', message, {
    hint: hint ?? 'log in again (agents login --device) or use an API key',
    cause,
  });

/**
 * A user name as a namespace-name segment: lowercase, characters outside `[a-z0-9_-]` become '-',
 * 'u-' in front when it does not start with a letter, at most 63 characters.
 */
export function normaliseUsername(raw: string): string {
  let name = raw
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-');
  if (!/^[a-z]/.test(name)) name = `u-${name}`;
  return name.slice(0, 63);
}

/**
 * Namespace roles from a claim value; entries that name no valid namespace or role are ignored.
 * Which namespaces a claim may speak for (not reserved ones, not another user's) is the accounts
 * service's decision: it audits what it drops.
 */
export function rolesFromClaim(value: unknown): Record<string, Role> | undefined {
  const roles: Record<string, Role> = {};
  const add = (ns: unknown, role: unknown): void => {
    if (typeof ns !== 'string' || typeof role !== 'string') return;
    if (!SEGMENT.test(ns) || !ROLE_SET.has(role)) return;
    roles[ns] = role as Role;
  };
  if (Array.isArray(value)) {
    for (const entry of value) {
      if (typeof entry !== 'string') continue;
      const i = entry.lastIndexOf(':');
      if (i > 0) add(entry.slice(0, i), entry.slice(i + 1));
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [ns, role] of Object.entries(value as Record<string, unknown>)) add(ns, role);
  } else {
    return undefined;
  }
  return roles;
}

/** The first 16 hex digits of the token's SHA-256: names the credential in logs and caches. */
export const tokenIdOf = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 16);

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

/** Where an issuer's OpenID Connect discovery document is. */
export const oidcMetadataUrl = (issuer: string): string => `${trimSlash(issuer)}/.well-known/openid-configuration`;

/**
 * Reads `<issuer>/.well-known/openid-configuration`. Throws AppError('UNAVAILABLE') when the
 * issuer cannot be reached or answers something that is not a discovery document for it.
 */
export async function discoverOidc(issuer: string, opts: { timeoutMs?: number } = {}): Promise<OidcDiscovery> {
  const metadataUrl = oidcMetadataUrl(issuer);
  const hint = `check that the OIDC issuer ${issuer} is reachable from this server and serves ${metadataUrl}`;
  let doc: Record<string, unknown>;
  try {
    const res = await fetch(metadataUrl, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
      redirect: 'follow',
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    doc = (await res.json()) as Record<string, unknown>;
    if (doc === null || typeof doc !== 'object') throw new Error('not a JSON object');
  } catch (err) {
    throw new AppError('UNAVAILABLE', `the OIDC discovery document of ${issuer} cannot be read: ${describe(err)}`, {
      hint,
      cause: err,
    });
  }
  const str = (k: string): string | undefined => (typeof doc[k] === 'string' ? doc[k] : undefined);
  const jwksUri = str('jwks_uri');
  if (!jwksUri || !isHttpUrl(jwksUri))
    throw new AppError('UNAVAILABLE', `the OIDC discovery document of ${issuer} names no valid jwks_uri`, { hint });
  const urlOrUndefined = (k: string): string | undefined => {
    const v = str(k);
    return v && isHttpUrl(v) ? v : undefined;
  };
  return {
    issuer: str('issuer') ?? issuer,
    jwksUri,
    deviceAuthorizationEndpoint: urlOrUndefined('device_authorization_endpoint'),
    tokenEndpoint: urlOrUndefined('token_endpoint'),
    metadataUrl,
  };
}

/** Seconds for a reader, to a tenth: `30 d`, `24 h`, `1.5 h`, `10 min`, `45 s` (days from two on). */
function duration(sec: number): string {
  const [size, unit] =
    sec >= 172_800 ? [86_400, 'd'] : sec >= 3_600 ? [3_600, 'h'] : sec >= 60 ? [60, 'min'] : [1, 's'];
  return `${Math.round((sec / size) * 10) / 10} ${unit}`;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
    const cause = (err as { cause?: unknown }).cause;
    const code = cause && typeof cause === 'object' ? (cause as { code?: unknown }).code : undefined;
    return typeof code === 'string' ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

let joseModule: Promise<typeof Jose> | undefined;
/** jose, loaded on first use: only a server given an OpenID Connect issuer verifies JWTs. */
const jose = (): Promise<typeof Jose> => (joseModule ??= import('jose'));

/**
 * Verifies bearer JWTs with jose against the issuer's JWKS: signature (asymmetric algorithms),
 * issuer, audience, exp/nbf. A kid the cached JWKS does not know refetches it (at most once per
 * cooldown), so the issuer's key rotation is followed.
 */
export class JoseJwtVerifier implements JwtVerifier {
  private jwks: Promise<JWTVerifyGetKey> | undefined;
  private resolving: Promise<JWTVerifyGetKey> | undefined;
  private readonly userClaim: string;

  private readonly opts: JoseJwtVerifierOptions;

  constructor(opts: JoseJwtVerifierOptions) {
    this.opts = opts;
    this.userClaim = opts.userClaim ?? 'preferred_username';
    if (opts.jwksUri) this.jwks = this.remote(opts.jwksUri);
  }

  async verify(token: string): Promise<VerifiedToken> {
    if (typeof token !== 'string' || token.split('.').length !== 3)
      throw unauthenticated('the token is malformed (not a JWT)');
    const jwks = await this.keys();
    const { jwtVerify, errors } = await jose();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        algorithms: ALGORITHMS,
        clockTolerance: this.opts.clockToleranceSec ?? 30,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw this.mapError(err, errors);
    }
    const expiresAt = this.checkLifetime(payload);
    const subject = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : undefined;
    if (!subject) throw unauthenticated('the token names no subject (sub claim)');
    const claimed = payload[this.userClaim];
    const raw = typeof claimed === 'string' && claimed.trim() !== '' ? claimed : subject;
    const roles = this.opts.rolesClaim ? rolesFromClaim(payload[this.opts.rolesClaim]) : undefined;
    return {
      issuer: this.opts.issuer,
      subject,
      username: normaliseUsername(raw),
      roles,
      expiresAt,
      tokenId: tokenIdOf(token),
    };
  }

  /** The token's `exp` (jose checked it is a number in the future), refused when it is too far ahead. */
  private checkLifetime(payload: JWTPayload): number {
    const exp = payload.exp as number;
    const max = this.opts.maxLifetimeSec ?? DEFAULT_MAX_TOKEN_LIFETIME_SEC;
    const now = Math.floor(Date.now() / 1000);
    // From iat when the issuer says when it was issued; never from a later instant than now.
    const from = typeof payload.iat === 'number' ? Math.min(payload.iat, now) : now;
    if (exp - from > max)
      throw unauthenticated(
        `the token's exp claim is too far ahead: it is valid for ${duration(exp - from)}, more than the ${duration(max)} this server accepts`,
        `ask the issuer for access tokens that live at most ${duration(max)} (the server's limit is CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS)`,
      );
    return exp;
  }

  private remote(uri: string): Promise<JWTVerifyGetKey> {
    // Parsed here, not once jose is loaded: a bad URI fails where it is configured.
    const url = new URL(uri);
    return jose().then(({ createRemoteJWKSet }) =>
      createRemoteJWKSet(url, {
        cooldownDuration: this.opts.cooldownMs ?? 30_000,
        timeoutDuration: this.opts.fetchTimeoutMs ?? 5_000,
      }),
    );
  }

  /** The key set; without a configured jwksUri, discovery is read now (a failure is retried next time). */
  private async keys(): Promise<JWTVerifyGetKey> {
    if (this.jwks) return this.jwks;
    this.resolving ??= discoverOidc(this.opts.issuer, { timeoutMs: this.opts.fetchTimeoutMs ?? 5_000 })
      .then((d) => (this.jwks = this.remote(d.jwksUri)))
      .finally(() => (this.resolving = undefined));
    return this.resolving;
  }

  private mapError(err: unknown, errors: typeof Jose.errors): AppError {
    if (err instanceof AppError) return err;
    if (err instanceof errors.JWTExpired) return unauthenticated('the token has expired');
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.claim === 'exp' && err.reason === 'missing')
        return unauthenticated(
          'the token has no exp claim (this server accepts only tokens that expire)',
          'ask the issuer for access tokens with an expiry (exp)',
        );
      if (err.claim === 'nbf') return unauthenticated('the token is not yet valid', 'check the clock of this server');
      if (err.claim === 'aud')
        return unauthenticated(
          'the token is for another audience',
          `ask the issuer for a token whose audience is ${this.opts.audience}`,
        );
      if (err.claim === 'iss')
        return unauthenticated(
          'the token is from another issuer',
          `this server accepts tokens of ${this.opts.issuer} only`,
        );
      return unauthenticated(`the token's ${err.claim} claim is invalid (${err.reason})`);
    }
    if (err instanceof errors.JWSSignatureVerificationFailed)
      return unauthenticated('the token has a bad signature', undefined, err);
    if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)
      return unauthenticated('the token is signed with a key the issuer does not publish (unknown key)');
    if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
      return unauthenticated('the token uses a signature algorithm this server does not accept');
    if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid)
      return unauthenticated(`the token is malformed: ${err.message}`);
    if (
      err instanceof errors.JWKSTimeout ||
      err instanceof errors.JWKSInvalid ||
      !(err instanceof errors.JOSEError) ||
      err.code === 'ERR_JOSE_GENERIC'
    )
      return new AppError('UNAVAILABLE', `the issuer's signing keys cannot be fetched: ${describe(err)}`, {
        hint: `check that ${this.opts.jwksUri ?? this.opts.issuer} is reachable from this server; API keys still work`,
        cause: err,
      });
    return unauthenticated(`the token cannot be verified: ${err.message}`, undefined, err);
  }
}

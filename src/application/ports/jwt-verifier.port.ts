import type { Role } from '../../domain/permissions.ts';

/** What a verified JWT says of its bearer, after the configured claim mapping. */
export interface VerifiedToken {
  issuer: string;
  subject: string;
  /** The user's name from the configured user claim (normalised to a namespace-name segment). */
  username: string;
  /** Namespace roles from the configured roles claim, when it is configured and present. */
  roles?: Record<string, Role> | undefined;
  /** Seconds since the epoch (the `exp` claim): a token without one is refused. */
  expiresAt: number;
  /** A short hash of the token: names the credential in the audit log and keys caches. */
  tokenId: string;
}

/**
 * Verifies bearer JWTs against the configured issuer's JWKS (signature, issuer, audience, expiry).
 * A token must carry `exp`, and may not be valid for longer than the configured maximum. A token
 * that fails throws AppError('UNAUTHENTICATED') whose message says why, e.g. "the token has
 * expired", "the token has no exp claim" or "the token is for another audience".
 */
export interface JwtVerifier {
  verify(token: string): Promise<VerifiedToken>;
}

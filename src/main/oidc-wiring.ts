/** The OIDC issuer a server accepts JWTs of: its settings, its discovery, what the Agent Card says of it. */
import type { Logger } from '../application/index.ts';
import { discoverOidc, oidcMetadataUrl, type OidcDiscovery } from '../infrastructure/index.ts';
import type { CardOidc } from '../protocol/a2a/agent-card.ts';
import { messageOf } from '../domain/errors.ts';

/** The OIDC settings of `agents serve` (flags or CLEVERAGENTS_OIDC_*). */
export interface OidcOptions {
  issuer: string;
  audience: string;
  /** The OAuth client id the CLI's device login uses (announced on the card). */
  clientId?: string | undefined;
  /** The claim naming the user (default preferred_username, then sub). */
  userClaim?: string | undefined;
  /** The claim carrying namespace roles. */
  rolesClaim?: string | undefined;
  /** How long discovery may take at start (ms; default 3000). */
  discoveryTimeoutMs?: number | undefined;
  /** How long to wait before discovery is tried again after a failure (ms; default 30 s). */
  discoveryRetryMs?: number | undefined;
  /** JWKS refetch cooldown for an unknown kid (ms; default 30 s). */
  jwksCooldownMs?: number | undefined;
  /** The longest a JWT may be valid (s; default 24 h, CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS). */
  maxTokenLifetimeSec?: number | undefined;
}

/** The issuer's discovery document, or undefined (logged as a warning) when it cannot be read now. */
export async function tryDiscovery(oidc: OidcOptions, logger: Logger): Promise<OidcDiscovery | undefined> {
  try {
    return await discoverOidc(oidc.issuer, { timeoutMs: oidc.discoveryTimeoutMs ?? 3_000 });
  } catch (err) {
    logger.warn(
      { issuer: oidc.issuer, err: messageOf(err) },
      'OIDC discovery failed: JWTs are verified once the issuer answers (API keys work meanwhile)',
    );
    return undefined;
  }
}

export function cardOidc(oidc: OidcOptions, d: OidcDiscovery | undefined): CardOidc {
  return {
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    metadataUrl: d?.metadataUrl ?? oidcMetadataUrl(oidc.issuer),
    deviceAuthorizationUrl: d?.deviceAuthorizationEndpoint,
    tokenUrl: d?.tokenEndpoint,
  };
}

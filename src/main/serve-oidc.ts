/** The OIDC settings of `agents serve`: flags, else CLEVERAGENTS_OIDC_*, checked before anything opens. */
import type { ServeOptions } from '../presentation/cli/index.ts';
import { envInt } from './limits-config.ts';
import type { OidcOptions } from './oidc-wiring.ts';
import { StartupError } from './startup-errors.ts';

/** The words an issuer's settings are made of (absent: not set). */
interface OidcWords {
  issuer: string | undefined;
  audience: string | undefined;
  clientId: string | undefined;
  userClaim: string | undefined;
  rolesClaim: string | undefined;
}

/**
 * `--oidc-*` flags, else CLEVERAGENTS_OIDC_*; undefined without an issuer. The issuer is an https
 * URL (http only on a loopback address); an issuer needs an audience, and the other settings an issuer.
 */
export function oidcOptions(opts: ServeOptions, env: NodeJS.ProcessEnv = process.env): OidcOptions | undefined {
  const pick = (flag: string | undefined, name: string): string | undefined => {
    const v = (flag ?? env[`CLEVERAGENTS_OIDC_${name}`])?.trim();
    return v === '' ? undefined : v;
  };
  const words: OidcWords = {
    issuer: pick(opts.oidcIssuer, 'ISSUER'),
    audience: pick(opts.oidcAudience, 'AUDIENCE'),
    clientId: pick(opts.oidcClientId, 'CLIENT_ID'),
    userClaim: pick(opts.oidcUserClaim, 'USER_CLAIM'),
    rolesClaim: pick(opts.oidcRolesClaim, 'ROLES_CLAIM'),
  };
  const { issuer, audience, clientId, userClaim, rolesClaim } = words;
  if (!issuer) {
    refuseStraySettings(words);
    return undefined;
  }
  checkIssuer(issuer);
  if (!audience)
    throw new StartupError(
      'an OIDC issuer is configured without an audience',
      'pass --oidc-audience <aud> (or CLEVERAGENTS_OIDC_AUDIENCE): the aud this server requires in every JWT',
    );
  checkWords(words);
  return {
    issuer,
    audience,
    ...(clientId ? { clientId } : {}),
    ...(userClaim ? { userClaim } : {}),
    ...(rolesClaim ? { rolesClaim } : {}),
    discoveryTimeoutMs: envInt('CLEVERAGENTS_OIDC_DISCOVERY_TIMEOUT_MS', 1, 60_000, env),
    // A minute to thirty days: an access token is short-lived; a month-long one is a leaked password.
    maxTokenLifetimeSec: envInt('CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS', 60, 2_592_000, env),
  };
}

/** Without an issuer, none of its other settings may be given (they would silently do nothing). */
function refuseStraySettings(w: OidcWords): void {
  const stray = [
    [w.audience, '--oidc-audience'],
    [w.clientId, '--oidc-client-id'],
    [w.userClaim, '--oidc-user-claim'],
    [w.rolesClaim, '--oidc-roles-claim'],
  ].find(([v]) => v !== undefined);
  if (stray)
    throw new StartupError(
      `${stray[1]} (or its CLEVERAGENTS_OIDC_* variable) is set but no OIDC issuer is`,
      'pass --oidc-issuer https://login.example.com/realms/team (or CLEVERAGENTS_OIDC_ISSUER), or drop the OIDC settings',
    );
}

/** An absolute https URL (http only on a loopback address), without credentials, query or fragment. */
function checkIssuer(issuer: string): void {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new StartupError(
      `the OIDC issuer ${JSON.stringify(issuer.slice(0, 200))} is not an absolute URL`,
      'pass --oidc-issuer https://login.example.com/realms/team (exactly the iss of its tokens)',
    );
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new StartupError(
      `the OIDC issuer must use https (got ${url.protocol}//${url.host})`,
      'pass the https URL of the issuer (http is accepted only on a loopback address)',
    );
  if (url.username || url.password || url.search || url.hash)
    throw new StartupError(
      'the OIDC issuer must not carry credentials, a query or a fragment',
      'pass the issuer URL exactly as its tokens name it (iss)',
    );
}

/** Claims, the client id and the audience are single words of at most 200 characters. */
function checkWords(w: OidcWords): void {
  for (const [v, flag] of [
    [w.userClaim, '--oidc-user-claim'],
    [w.rolesClaim, '--oidc-roles-claim'],
    [w.clientId, '--oidc-client-id'],
    [w.audience, '--oidc-audience'],
  ] as const)
    if (v !== undefined && (/\s/.test(v) || v.length > 200))
      throw new StartupError(`${flag} must be one word of at most 200 characters`, `check the value of ${flag}`);
}

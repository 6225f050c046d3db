import { AppError } from '../../domain/errors.ts';
import type { Role } from '../../domain/permissions.ts';
import type { AccountRepository, UserRecord } from '../ports/account.repository.port.ts';
import type { JwtVerifier, VerifiedToken } from '../ports/jwt-verifier.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import { makePrincipal } from '../ports/principal.ts';
import type { NamespaceRepository } from '../ports/registry.repository.port.ts';
import { RESERVED_NAMESPACES } from '../registry/namespace.service.ts';
import type { AuditRecorder } from './audit.service.ts';
import {
  Bounded,
  disabled,
  RESERVED_USER_NAMES,
  SEGMENT,
  unauthenticated,
  type Checked,
} from './credential-formats.ts';

export interface JwtSignInDeps {
  jwt: JwtVerifier;
  accounts: Pick<AccountRepository, 'userByExternalId' | 'getUser' | 'createUser' | 'rolesOf'>;
  namespaces: Pick<NamespaceRepository, 'get' | 'defaultFor'>;
  audit: AuditRecorder;
  logger: Logger;
  now?: (() => number) | undefined;
  /** Tokens and dropped claims remembered (default 10,000): the signature is checked once per token per process. */
  cacheSize?: number | undefined;
}

/** Why a role the roles claim names is not given. */
type Dropped = 'reserved namespace' | "another user's personal namespace";

/**
 * Signing in with a bearer JWT of the configured OIDC issuer: the verified token's subject is a
 * user (made on first sight), and its roles claim adds namespace roles — only for namespaces a
 * claim can rightly speak for (see {@link claimedRoles}).
 */
export class JwtSignIn {
  /** JWTs already verified, until they expire: the signature is checked once per token per process. */
  private readonly tokens: Bounded<VerifiedToken>;
  /** `<token id> <namespace>` of claimed roles already dropped and audited. */
  private readonly dropped: Bounded<true>;

  private readonly deps: JwtSignInDeps;
  private readonly now: () => number;

  constructor(deps: JwtSignInDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.tokens = new Bounded(deps.cacheSize ?? 10_000);
    this.dropped = new Bounded(deps.cacheSize ?? 10_000);
  }

  async check(token: string, client: string): Promise<Checked> {
    const t = await this.verified(token);
    const externalId = `${t.issuer}|${t.subject}`;
    const user =
      (await this.deps.accounts.userByExternalId(externalId)) ?? (await this.jitUser(t.username, externalId));
    if (user.disabledAt !== undefined) throw disabled(user, t.tokenId);
    const roles = await this.claimedRoles(user, t, client);
    const principal = makePrincipal({
      id: user.name,
      kind: 'jwt',
      roles,
      admin: user.admin,
      defaultNamespace: user.defaultNamespace,
      credential: t.tokenId,
    });
    return { principal, reusable: true, expiresAt: t.expiresAt * 1000 };
  }

  /**
   * The user's stored roles, with the roles claim's on top — except where a claim cannot speak:
   * a reserved namespace (`local`, `system`, …: claiming `local:owner` would make the bearer the
   * server's administrator namespace owner) and another user's personal namespace (the issuer
   * vouches for who the bearer is, not for what other users own). Those are dropped, the token
   * keeps its other roles, and each is audited once per token (`auth.role-dropped`) and logged.
   * The user's own personal namespace stays theirs (owner), whatever the claim says.
   *
   * A claim naming a namespace that does not exist (yet) is ignored quietly: the claim is read on
   * every request, so the role applies once someone creates the namespace (`agents namespace
   * create`) — how an OIDC team is set up — and never if it becomes a user's personal namespace.
   */
  private async claimedRoles(user: UserRecord, t: VerifiedToken, client: string): Promise<Record<string, Role>> {
    const roles: Record<string, Role> = { ...(await this.deps.accounts.rolesOf(user.name)) };
    for (const [ns, role] of Object.entries(t.roles ?? {})) {
      if (!SEGMENT.test(ns) || ns === user.defaultNamespace) continue;
      if (RESERVED_NAMESPACES.includes(ns)) {
        await this.drop(user, t, ns, role, 'reserved namespace', client);
        continue;
      }
      if (!(await this.deps.namespaces.get(ns))) continue;
      const owners = await this.deps.namespaces.defaultFor(ns);
      if (owners.some((name) => name !== user.name)) {
        await this.drop(user, t, ns, role, "another user's personal namespace", client);
        continue;
      }
      roles[ns] = role;
    }
    return roles;
  }

  private async drop(
    user: UserRecord,
    t: VerifiedToken,
    namespace: string,
    role: Role,
    reason: Dropped,
    client: string,
  ): Promise<void> {
    const key = `${t.tokenId} ${namespace}`;
    if (this.dropped.has(key)) return;
    this.dropped.set(key, true);
    this.deps.logger.warn(
      { user: user.name, credential: t.tokenId, namespace, role, reason },
      "a role from the token's roles claim was dropped",
    );
    await this.deps.audit.record({
      event: 'auth.role-dropped',
      principal: user.name,
      credential: t.tokenId,
      namespace,
      outcome: 'refused',
      client,
      details: { role, reason },
    });
  }

  /**
   * A token's claims, verified once per process while it is valid: its signature cannot change,
   * and its expiry is checked on every use (the user and their roles are read every request).
   */
  private async verified(token: string): Promise<VerifiedToken> {
    const cached = this.tokens.get(token);
    if (cached && cached.expiresAt * 1000 > this.now()) return cached;
    const t = await this.deps.jwt.verify(token);
    // The verifier requires `exp`; a verifier that let a token without one through is not trusted.
    if (!Number.isFinite(t.expiresAt))
      throw unauthenticated(
        'the token has no exp claim (this server accepts only tokens that expire)',
        'ask the issuer for access tokens with an expiry (exp)',
        'no expiry',
      );
    this.tokens.set(token, t);
    return t;
  }

  /** A user the issuer vouches for, made on first sight: their name, else name-2, name-3, … */
  private async jitUser(username: string, externalId: string): Promise<UserRecord> {
    const base = SEGMENT.test(username) ? username.slice(0, 56) : undefined;
    if (!base)
      throw unauthenticated(
        `the token's user name ${JSON.stringify(username.slice(0, 80))} cannot name a user`,
        'ask the administrator to map a user claim of lowercase letters, digits, - and _',
        'bad user name',
      );
    for (let n = 1; n <= 100; n++) {
      const name = n === 1 ? base : `${base}-${n}`;
      if (RESERVED_USER_NAMES.includes(name) || (await this.deps.accounts.getUser(name))) continue;
      const user: UserRecord = {
        name,
        admin: false,
        defaultNamespace: name,
        externalId,
        createdAt: new Date(this.now()).toISOString(),
      };
      try {
        await this.deps.accounts.createUser(user);
      } catch (err) {
        if (!(err instanceof AppError && err.reason === 'ALREADY_EXISTS')) throw err;
        // Made by a concurrent first request of the same person: theirs is the one.
        const same = await this.deps.accounts.userByExternalId(externalId);
        if (same) return same;
        continue;
      }
      await this.deps.audit.record({
        event: 'user.created',
        principal: name,
        target: name,
        namespace: name,
        outcome: 'ok',
        details: { externalId, via: 'jwt' },
      });
      return user;
    }
    throw unauthenticated(`no free user name for ${base}`, 'ask an administrator', 'no user name');
  }
}

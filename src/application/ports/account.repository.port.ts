import type { Role } from '../../domain/permissions.ts';

/** A server-mode account. */
export interface UserRecord {
  /** The user's name: a namespace-name segment (`[a-z][a-z0-9_-]*`), unique. */
  name: string;
  displayName?: string | undefined;
  /** A server administrator (users, audit log, diagnostics). */
  admin: boolean;
  /** Where the user's requests act without a tenant: their own namespace, made with them. */
  defaultNamespace: string;
  /** `issuer|subject` when the OIDC issuer vouches for the user. */
  externalId?: string | undefined;
  createdAt: string;
  /** Set when disabled: every credential of the user is refused from the next request on. */
  disabledAt?: string | undefined;
}

/** An API key as stored: never the secret, only its slow hash. */
export interface ApiKeyRecord {
  /** The lookup id: the part of the key before its secret (one indexed read verifies a key). */
  id: string;
  user: string;
  name: string;
  /** The slow hash of the secret (see KeyHasher). */
  hash: string;
  createdAt: string;
  expiresAt?: string | undefined;
  revokedAt?: string | undefined;
  lastUsedAt?: string | undefined;
}

/** What one indexed read returns for a presented key: the key, its user and the user's roles. */
export interface KeyLookup {
  key: ApiKeyRecord;
  user: UserRecord;
  roles: Record<string, Role>;
}

/** Users and their API keys (server mode). */
export interface AccountRepository {
  countUsers(): Promise<number>;
  getUser(name: string): Promise<UserRecord | undefined>;
  userByExternalId(externalId: string): Promise<UserRecord | undefined>;
  listUsers(): Promise<UserRecord[]>;
  /**
   * Creates the user, its default namespace (unless it exists) and its owner membership there, in
   * one transaction. Refuses (ALREADY_EXISTS) a taken name, or a default namespace that belongs to
   * someone else unless `joinExisting` (the bootstrap admin joins `local/` as an owner).
   */
  createUser(user: UserRecord, opts?: { joinExisting?: boolean }): Promise<void>;
  setDisabled(name: string, at: string | undefined): Promise<void>;
  /** The user's roles from their namespace memberships. */
  rolesOf(name: string): Promise<Record<string, Role>>;
  /** The key with that lookup id, its user and the user's roles; undefined when there is no such key. */
  lookupKey(id: string): Promise<KeyLookup | undefined>;
  createKey(key: ApiKeyRecord): Promise<void>;
  /** Replaces a key of the user with that name (the server token: one per admin), or creates it. */
  replaceKey(key: ApiKeyRecord): Promise<void>;
  listKeys(user?: string): Promise<ApiKeyRecord[]>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  revokeKey(id: string, at: string): Promise<void>;
  /** Records that a key was used (at most about once a minute per key: callers throttle). */
  touchKey(id: string, at: string): Promise<void>;
  /**
   * A number that changes whenever anything a credential's principal depends on may have changed
   * (keys other than their last use, users, memberships, namespaces), by this process or another.
   * Optional: without it every request is authenticated in full. Synchronous and cheap: it is
   * asked on every request that reuses an earlier authentication.
   */
  authVersion?(): number;
}

/** Slow hashing for API key secrets (scrypt): hashing costs milliseconds, on purpose. */
export interface KeyHasher {
  hash(secret: string): Promise<string>;
  verify(secret: string, stored: string): Promise<boolean>;
}

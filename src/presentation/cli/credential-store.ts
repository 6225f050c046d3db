import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError } from './exit-codes.ts';
import { refreshAccessToken } from './support/device-flow.ts';
import { messageOf } from '../../protocol/client/index.ts';

export { credentialsPath } from './config-paths.ts';

/** What `agents login` keeps for one server. */
export interface StoredCredential {
  kind: 'key' | 'oauth';
  /** The API key, or the OAuth access token. */
  token: string;
  refreshToken?: string;
  /** When the access token expires (milliseconds since the epoch). */
  expiresAt?: number;
  tokenUrl?: string;
  clientId?: string;
  /** Who the server said we are when we logged in. */
  user: string;
}

/** `credentials.json`: a credential per server URL, and the server `agents login` made current. */
export interface CredentialStore {
  current?: string;
  servers: Record<string, StoredCredential>;
}

/** Server URLs are keys without a trailing slash. */
export function serverKey(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Reads the store; a missing file is an empty store, a broken one a usage error. */
export function loadCredentials(path: string): CredentialStore {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} };
    throw new UsageError(`cannot read the credentials file ${path}: ${messageOf(err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new UsageError(
      `the credentials file ${path} is not valid JSON`,
      'delete it and log in again (`agents login`)',
    );
  }
  const d = (doc && typeof doc === 'object' && !Array.isArray(doc) ? doc : {}) as Record<string, unknown>;
  const servers: Record<string, StoredCredential> = {};
  const raw = d['servers'];
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [url, v] of Object.entries(raw as Record<string, unknown>)) {
      const c = v as Partial<StoredCredential> | null;
      if (c && (c.kind === 'key' || c.kind === 'oauth') && typeof c.token === 'string' && c.token !== '')
        servers[url] = { ...c, user: typeof c.user === 'string' ? c.user : '' } as StoredCredential;
    }
  }
  const store: CredentialStore = { servers };
  if (typeof d['current'] === 'string' && d['current'] !== '') store.current = d['current'];
  return store;
}

/** Writes the store atomically: directory 0700, file 0600, renamed into place. */
export function saveCredentials(path: string, store: CredentialStore): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Expiry times in seconds (JWT style) or milliseconds, as milliseconds. */
export function expiryMs(n: number): number {
  return n < 1e12 ? n * 1000 : n;
}

/** Refresh this long before the access token expires. */
const REFRESH_EARLY_MS = 30_000;

/**
 * The stored token for a server; an OAuth access token that has expired (or is about to) is
 * refreshed with its refresh token first, and the store updated.
 */
export async function refreshIfExpired(
  path: string,
  store: CredentialStore,
  key: string,
  now: () => number = Date.now,
): Promise<string> {
  const c = store.servers[key];
  if (!c) throw new UsageError(`no stored login for ${key}`, 'log in with `agents login --server URL`');
  if (c.kind !== 'oauth' || c.expiresAt === undefined || c.expiresAt - REFRESH_EARLY_MS > now()) return c.token;
  if (!c.refreshToken || !c.tokenUrl || !c.clientId)
    throw new UsageError(
      `your login to ${key} has expired`,
      `log in again with \`agents login --server ${key} --device\``,
    );
  let fresh: { accessToken: string; refreshToken?: string; expiresAt?: number };
  try {
    fresh = await refreshAccessToken({ tokenUrl: c.tokenUrl, clientId: c.clientId, refreshToken: c.refreshToken });
  } catch (err) {
    throw new UsageError(
      `your login to ${key} has expired and could not be refreshed: ${messageOf(err)}`,
      `log in again with \`agents login --server ${key} --device\``,
    );
  }
  const next: StoredCredential = { ...c, token: fresh.accessToken };
  if (fresh.refreshToken !== undefined) next.refreshToken = fresh.refreshToken;
  if (fresh.expiresAt !== undefined) next.expiresAt = expiryMs(fresh.expiresAt);
  else delete next.expiresAt;
  store.servers[key] = next;
  saveCredentials(path, store);
  return next.token;
}

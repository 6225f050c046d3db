/**
 * A real `agents serve` for team tests: started with the admin's server token (and, if asked, an
 * OIDC issuer), reached with raw JSON-RPC over HTTP under any credential.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startHttpServer, tempDir, TOKEN, type HttpServerProcess } from './harness.ts';

export interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface Caller {
  /** One request; `status` is the HTTP status. */
  call(method: string, params?: unknown): Promise<{ status: number; body: RpcAnswer }>;
  /** One request that must succeed; its result. */
  ok<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T>;
}

export interface TeamServer {
  baseUrl: string;
  dataDir: string;
  /** The admin's key (the server token). */
  adminToken: string;
  process: HttpServerProcess;
  /** Requests with this credential (a key or a JWT); undefined sends none. */
  as(credential: string | undefined): Caller;
  /** Adds a user (as the admin); returns the user's first key. */
  addUser(adminKey: string, name: string): Promise<string>;
  /** Revokes every key of a user (as the admin). */
  revokeAllKeys(adminKey: string, user: string): Promise<void>;
  close(): Promise<void>;
}

export interface TeamServerOptions {
  oidc?: { issuer: string; audience: string; rolesClaim?: string; userClaim?: string; clientId?: string };
  env?: NodeJS.ProcessEnv;
  defaultActor?: string;
}

/** The first string in a value that looks like one of our API keys. */
export function findKey(v: unknown): string | undefined {
  if (typeof v === 'string') return /^ca_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/.test(v) ? v : undefined;
  if (Array.isArray(v)) return v.map(findKey).find((x) => x !== undefined);
  if (v && typeof v === 'object')
    return Object.values(v)
      .map(findKey)
      .find((x) => x !== undefined);
  return undefined;
}

export async function startTeamServer(opts: TeamServerOptions = {}): Promise<TeamServer> {
  const dataDir = tempDir('ca-team-');
  const args: string[] = [];
  if (opts.oidc) {
    args.push('--oidc-issuer', opts.oidc.issuer, '--oidc-audience', opts.oidc.audience);
    if (opts.oidc.rolesClaim) args.push('--oidc-roles-claim', opts.oidc.rolesClaim);
    if (opts.oidc.userClaim) args.push('--oidc-user-claim', opts.oidc.userClaim);
    if (opts.oidc.clientId) args.push('--oidc-client-id', opts.oidc.clientId);
  }
  const proc = await startHttpServer({
    dataDir,
    args,
    env: { ...process.env, CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '0', ...opts.env },
    defaultActor: opts.defaultActor,
  });
  const url = `${proc.baseUrl}/a2a`;
  let id = 0;
  const as = (credential: string | undefined): Caller => {
    const call = async (method: string, params: unknown = {}) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        'a2a-extensions': 'urn:cleveragents:extensions:v1',
      };
      if (credential !== undefined) headers['authorization'] = `Bearer ${credential}`;
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as RpcAnswer };
    };
    return {
      call,
      async ok<T>(method: string, params?: unknown): Promise<T> {
        const r = await call(method, params);
        assert.ok(!r.body.error, `${method}: ${JSON.stringify(r.body.error)}`);
        return r.body.result as T;
      },
    };
  };
  return {
    baseUrl: proc.baseUrl,
    dataDir,
    adminToken: TOKEN,
    process: proc,
    as,
    async addUser(adminKey, name) {
      const r = await as(adminKey).ok('_cleveragents/user/add', { name });
      const key = findKey(r);
      assert.ok(key, `user/add returned a key: ${JSON.stringify(r)}`);
      return key;
    },
    async revokeAllKeys(adminKey, user) {
      const r = await as(adminKey).ok<{ keys: Array<{ id: string }> }>('_cleveragents/key/list', { user });
      for (const k of r.keys) await as(adminKey).ok('_cleveragents/key/revoke', { id: k.id });
    },
    async close() {
      await proc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

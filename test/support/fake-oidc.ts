/**
 * A fake OpenID Connect issuer on 127.0.0.1 and an ephemeral port (real HTTP): the discovery
 * document, the JWKS, the device authorization endpoint (RFC 8628) and the token endpoint
 * (device_code and refresh_token grants). Tokens are ES256 JWTs signed with jose; `rotate` makes a
 * new key pair (and kid), `jwksDown` makes the JWKS answer 503.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface IssueOptions {
  /** Seconds until `exp` (negative: already expired; null: no `exp` claim at all). Default 3600. */
  expiresIn?: number | null;
  /** Seconds from now to `iat` (negative: issued in the past; null: no `iat` claim). Default 0. */
  issuedAt?: number | null;
  /** Seconds until `nbf` (positive: not yet valid). */
  notBefore?: number;
  /** Default: the fake's audience. */
  audience?: string;
  /** Default: the fake's issuer URL. */
  issuer?: string;
  /** Default: the current key's kid. */
  kid?: string;
}

interface KeyPair {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

interface DeviceGrant {
  deviceCode: string;
  userCode: string;
  clientId: string;
  scope: string | undefined;
  state: 'pending' | 'approved' | 'denied' | 'expired';
  claims?: JWTPayload;
  /** How many slow_down answers are still owed. */
  slowDowns: number;
  polls: number;
}

export interface FakeOidcOptions {
  audience?: string;
  /** Client ids the device endpoint accepts (default: any). */
  clientIds?: string[];
  /** The `interval` the device endpoint advertises (s; default 1: tests set CLEVERAGENTS_DEVICE_POLL_MS). */
  interval?: number;
  /** The `expires_in` the device endpoint advertises (s; default 600). */
  deviceExpiresIn?: number;
}

export interface FakeOidc {
  /** The issuer URL (http://127.0.0.1:<port>). */
  issuer: string;
  audience: string;
  jwksUri: string;
  deviceAuthorizationEndpoint: string;
  tokenEndpoint: string;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  /** Every form body the device authorization endpoint received. */
  deviceRequests: Array<Record<string, string>>;
  /** Every form body the token endpoint received. */
  tokenRequests: Array<Record<string, string>>;
  /** The current key's kid. */
  kid(): string;
  issue(claims: JWTPayload, opts?: IssueOptions): Promise<string>;
  /** A new key pair becomes current; the JWKS keeps the old public key only with keepOld. */
  rotate(opts?: { keepOld?: boolean }): Promise<string>;
  /** Answer the JWKS (and discovery) with 503 while true. */
  setDown(down: boolean): void;
  /** The user codes of the device grants started, oldest first. */
  userCodes(): string[];
  /** The user approves the device grant: the next poll gets tokens whose claims these are. */
  approve(userCode: string, claims: JWTPayload): void;
  deny(userCode: string): void;
  /** The device code expires: the next poll gets expired_token. */
  expire(userCode: string): void;
  /** The next `times` polls of the grant get slow_down. */
  slowDown(userCode: string, times?: number): void;
  /** How many times the grant was polled. */
  polls(userCode: string): number;
  /** Resolves with the user code of the `index`-th device grant (0-based) once it exists. */
  waitForGrant(index: number): Promise<string>;
  close(): Promise<void>;
}

async function newKey(): Promise<KeyPair> {
  const kid = randomBytes(6).toString('hex');
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { kid, privateKey, jwk };
}

export async function startFakeOidc(options: FakeOidcOptions = {}): Promise<FakeOidc> {
  const audience = options.audience ?? 'cleveragents';
  let keys: KeyPair[] = [await newKey()];
  let jwksFetches = 0;
  let down = false;
  const grants = new Map<string, DeviceGrant>();
  const byDeviceCode = new Map<string, DeviceGrant>();
  const refreshTokens = new Map<string, JWTPayload>();
  const tokenRequests: Array<Record<string, string>> = [];
  const deviceRequests: Array<Record<string, string>> = [];
  const waiters: Array<() => void> = [];
  const sockets = new Set<Socket>();
  let issuer = '';

  const sign = async (claims: JWTPayload, opts: IssueOptions = {}): Promise<string> => {
    const key = opts.kid ? keys.find((k) => k.kid === opts.kid) : keys[keys.length - 1];
    if (!key) throw new Error(`no key ${opts.kid}`);
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
      .setIssuer(opts.issuer ?? issuer)
      .setAudience(opts.audience ?? audience);
    if (opts.issuedAt !== null) jwt.setIssuedAt(now + (opts.issuedAt ?? 0));
    if (opts.expiresIn !== null) jwt.setExpirationTime(now + (opts.expiresIn ?? 3600));
    if (opts.notBefore !== undefined) jwt.setNotBefore(now + opts.notBefore);
    return jwt.sign(key.privateKey);
  };

  const send = (res: http.ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };

  const readForm = async (req: http.IncomingMessage): Promise<Record<string, string>> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
  };

  const tokenEndpoint = async (form: Record<string, string>, res: http.ServerResponse): Promise<void> => {
    tokenRequests.push(form);
    if (form['grant_type'] === 'urn:ietf:params:oauth:grant-type:device_code') {
      const grant = byDeviceCode.get(form['device_code'] ?? '');
      if (!grant || grant.clientId !== form['client_id']) return send(res, 400, { error: 'invalid_grant' });
      grant.polls++;
      if (grant.slowDowns > 0) {
        grant.slowDowns--;
        return send(res, 400, { error: 'slow_down' });
      }
      if (grant.state === 'pending') return send(res, 400, { error: 'authorization_pending' });
      if (grant.state === 'denied') return send(res, 400, { error: 'access_denied' });
      if (grant.state === 'expired') return send(res, 400, { error: 'expired_token' });
      byDeviceCode.delete(grant.deviceCode);
      const claims = grant.claims ?? {};
      const refresh = randomBytes(16).toString('hex');
      refreshTokens.set(refresh, claims);
      return send(res, 200, {
        access_token: await sign(claims),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: refresh,
        ...(grant.scope ? { scope: grant.scope } : {}),
      });
    }
    if (form['grant_type'] === 'refresh_token') {
      const claims = refreshTokens.get(form['refresh_token'] ?? '');
      if (!claims) return send(res, 400, { error: 'invalid_grant', error_description: 'unknown refresh token' });
      refreshTokens.delete(form['refresh_token'] ?? '');
      const refresh = randomBytes(16).toString('hex');
      refreshTokens.set(refresh, claims);
      return send(res, 200, {
        access_token: await sign(claims),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: refresh,
      });
    }
    send(res, 400, { error: 'unsupported_grant_type' });
  };

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    void (async () => {
      if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
        if (down) return send(res, 503, { error: 'down' });
        return send(res, 200, {
          issuer,
          jwks_uri: `${issuer}/jwks`,
          device_authorization_endpoint: `${issuer}/device`,
          token_endpoint: `${issuer}/token`,
          grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
          id_token_signing_alg_values_supported: ['ES256'],
        });
      }
      if (req.method === 'GET' && path === '/jwks') {
        jwksFetches++;
        if (down) return send(res, 503, { error: 'down' });
        return send(res, 200, { keys: keys.map((k) => k.jwk) });
      }
      if (req.method === 'POST' && path === '/device') {
        const form = await readForm(req);
        deviceRequests.push(form);
        const clientId = form['client_id'] ?? '';
        if (!clientId || (options.clientIds && !options.clientIds.includes(clientId)))
          return send(res, 401, { error: 'invalid_client' });
        const userCode = `${randomBytes(2).toString('hex')}-${randomBytes(2).toString('hex')}`.toUpperCase();
        const grant: DeviceGrant = {
          deviceCode: randomBytes(16).toString('hex'),
          userCode,
          clientId,
          scope: form['scope'],
          state: 'pending',
          slowDowns: 0,
          polls: 0,
        };
        grants.set(userCode, grant);
        byDeviceCode.set(grant.deviceCode, grant);
        for (const w of waiters.splice(0)) w();
        return send(res, 200, {
          device_code: grant.deviceCode,
          user_code: userCode,
          verification_uri: `${issuer}/activate`,
          verification_uri_complete: `${issuer}/activate?user_code=${userCode}`,
          expires_in: options.deviceExpiresIn ?? 600,
          interval: options.interval ?? 1,
        });
      }
      if (req.method === 'POST' && path === '/token') return tokenEndpoint(await readForm(req), res);
      send(res, 404, { error: 'not_found' });
    })().catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: 'server_error', error_description: String(err) });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const grant = (userCode: string): DeviceGrant => {
    const g = grants.get(userCode);
    if (!g) throw new Error(`no device grant ${userCode}`);
    return g;
  };
  return {
    issuer,
    audience,
    jwksUri: `${issuer}/jwks`,
    deviceAuthorizationEndpoint: `${issuer}/device`,
    tokenEndpoint: `${issuer}/token`,
    jwksFetches: () => jwksFetches,
    tokenRequests,
    deviceRequests,
    kid: () => (keys[keys.length - 1] as KeyPair).kid,
    issue: sign,
    async rotate(opts = {}) {
      const next = await newKey();
      keys = opts.keepOld ? [...keys, next] : [next];
      return next.kid;
    },
    setDown(d) {
      down = d;
    },
    userCodes: () => [...grants.keys()],
    approve(userCode, claims) {
      const g = grant(userCode);
      g.state = 'approved';
      g.claims = claims;
    },
    deny(userCode) {
      grant(userCode).state = 'denied';
    },
    expire(userCode) {
      grant(userCode).state = 'expired';
    },
    slowDown(userCode, times = 1) {
      grant(userCode).slowDowns += times;
    },
    polls: (userCode) => grant(userCode).polls,
    async waitForGrant(index) {
      while (grants.size <= index) await new Promise<void>((resolve) => waiters.push(resolve));
      return [...grants.keys()][index] as string;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { setTimeout as delay } from 'node:timers/promises';
import { CliError } from '../exit-codes.ts';
import { messageOf } from '../../../protocol/client/index.ts';

/**
 * OAuth 2.0 Device Authorization Grant (RFC 8628) for `agents login --device`: the endpoints come
 * from the server's Agent Card (the oauth2 scheme's deviceCode flow, else its metadata URL, else
 * the issuer the extension names), the client id from the card's extension params unless given.
 */

type Card = Record<string, unknown>;

export interface DeviceLoginResult {
  accessToken: string;
  refreshToken?: string;
  /** Seconds since the epoch (from the token response's expires_in). */
  expiresAt?: number;
  tokenUrl: string;
  clientId: string;
}

export interface RefreshResult {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: number;
}

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const REQUEST_TIMEOUT_MS = 15_000;
/** RFC 8628 §3.2: the interval when the issuer names none; §3.5: slow_down adds 5 s. */
const DEFAULT_INTERVAL_S = 5;
const SLOW_DOWN_S = 5;
const LOGIN_HINT = 'run agents login --device again';

const authError = (message: string, hint = LOGIN_HINT): CliError =>
  new CliError(message, 'AUTH', 'AuthenticationError', hint);
const unreachable = (message: string, hint: string): CliError =>
  new CliError(message, 'UNREACHABLE', 'ServiceUnavailableError', hint);

/**
 * How long one second of the issuer's polling interval lasts here (ms; default 1000). Tests set
 * CLEVERAGENTS_DEVICE_POLL_MS to poll fast; slow_down still adds five intervals' worth.
 */
function msPerSecond(): number {
  const raw = Number(process.env['CLEVERAGENTS_DEVICE_POLL_MS']);
  return Number.isFinite(raw) && raw >= 1 ? raw : 1000;
}

const asRecord = (v: unknown): Card | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Card) : undefined;
const asString = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** https, or http to a loopback address (a local issuer): a code or token never crosses the network in clear. */
function checkUrl(raw: string, what: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw unreachable(`the ${what} ${JSON.stringify(raw.slice(0, 200))} is not a URL`, 'ask the server operator');
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw unreachable(`the ${what} ${url.href} does not use https`, 'ask the server operator to use an https issuer');
  return url.href;
}

interface DeviceEndpoints {
  deviceAuthorizationUrl?: string | undefined;
  tokenUrl?: string | undefined;
  scopes?: string[] | undefined;
  clientId?: string | undefined;
}

/** What the card says about device login: the v1.0 shape, the v0.3 shape, or the extension's issuer. */
function readCard(card: Card): { endpoints: DeviceEndpoints; metadataUrl: string | undefined } {
  const endpoints: DeviceEndpoints = {};
  let metadataUrl: string | undefined;
  const schemes = asRecord(card['securitySchemes']) ?? {};
  for (const raw of Object.values(schemes)) {
    const s = asRecord(raw);
    if (!s) continue;
    const oauth = asRecord(s['oauth2SecurityScheme']) ?? (s['type'] === 'oauth2' ? s : undefined);
    if (!oauth) continue;
    metadataUrl ??= asString(oauth['oauth2MetadataUrl']);
    const device = asRecord(asRecord(oauth['flows'])?.['deviceCode']);
    if (device) {
      endpoints.deviceAuthorizationUrl ??= asString(device['deviceAuthorizationUrl']);
      endpoints.tokenUrl ??= asString(device['tokenUrl']);
      endpoints.scopes ??= Object.keys(asRecord(device['scopes']) ?? {});
    }
  }
  const exts = asRecord(card['capabilities'])?.['extensions'];
  for (const raw of Array.isArray(exts) ? exts : []) {
    const auth = asRecord(asRecord(asRecord(raw)?.['params'])?.['auth']);
    if (!auth) continue;
    endpoints.clientId ??= asString(auth['oauthClientId']);
    const issuer = asString(auth['issuer']);
    if (issuer) metadataUrl ??= `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  }
  return { endpoints, metadataUrl };
}

async function post(
  url: string,
  form: Record<string, string>,
  signal: AbortSignal,
  what: string,
): Promise<{ status: number; body: Card }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
  } catch (err) {
    if (signal.aborted) throw cancelled();
    throw unreachable(
      `the ${what} at ${url} cannot be reached: ${messageOf(err)}`,
      'check your network, then try again',
    );
  }
  const text = await res.text().catch(() => '');
  let body: Card | undefined;
  try {
    body = asRecord(JSON.parse(text));
  } catch {
    body = undefined;
  }
  if (!body)
    throw unreachable(
      `the ${what} at ${url} answered HTTP ${res.status} without a JSON object`,
      'check that the issuer supports the device flow (RFC 8628)',
    );
  return { status: res.status, body };
}

const cancelled = (): CliError =>
  new CliError('the login was cancelled', 'INTERRUPTED', 'Interrupted', 'run agents login --device to try again');

async function discover(metadataUrl: string, signal: AbortSignal): Promise<DeviceEndpoints> {
  let doc: Card | undefined;
  try {
    const res = await fetch(checkUrl(metadataUrl, 'OAuth metadata URL'), {
      headers: { accept: 'application/json' },
      signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    doc = asRecord(await res.json());
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (signal.aborted) throw cancelled();
    throw unreachable(
      `the issuer's metadata at ${metadataUrl} cannot be read: ${messageOf(err)}`,
      'check your network, or ask the server operator whether the issuer is up',
    );
  }
  return {
    deviceAuthorizationUrl: asString(doc?.['device_authorization_endpoint']),
    tokenUrl: asString(doc?.['token_endpoint']),
  };
}

function oauthError(body: Card): { error: string; description: string } {
  const error = asString(body['error']) ?? 'unknown_error';
  const description = asString(body['error_description']);
  return { error, description: description ? ` (${description.slice(0, 300)})` : '' };
}

function tokens(body: Card, what: string): RefreshResult {
  const accessToken = asString(body['access_token']);
  if (!accessToken) throw unreachable(`the ${what} answered no access_token`, 'ask the server operator');
  const result: RefreshResult = { accessToken };
  const refresh = asString(body['refresh_token']);
  if (refresh) result.refreshToken = refresh;
  const expiresIn = body['expires_in'];
  if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0)
    result.expiresAt = Math.floor(Date.now() / 1000) + Math.floor(expiresIn);
  return result;
}

/** Where and as whom the device flow runs: from the Agent Card, the issuer's metadata and the flags. */
async function deviceEndpoints(
  opts: { card: Record<string, unknown>; clientId?: string; scope?: string },
  signal: AbortSignal,
): Promise<{ deviceUrl: string; tokenUrl: string; clientId: string; scope: string }> {
  const { endpoints, metadataUrl } = readCard(opts.card);
  if ((!endpoints.deviceAuthorizationUrl || !endpoints.tokenUrl) && metadataUrl) {
    const found = await discover(metadataUrl, signal);
    endpoints.deviceAuthorizationUrl ??= found.deviceAuthorizationUrl;
    endpoints.tokenUrl ??= found.tokenUrl;
  }
  if (!endpoints.deviceAuthorizationUrl || !endpoints.tokenUrl)
    throw new CliError(
      'this server does not offer device login (its Agent Card declares no OAuth device flow)',
      'INVALID_STATE',
      'UnsupportedOperationError',
      'log in with an API key instead (ask the server operator for one)',
    );
  const clientId = opts.clientId ?? endpoints.clientId;
  if (!clientId)
    throw new CliError(
      'the server names no OAuth client id for device login',
      'USAGE',
      'UsageError',
      'pass --client-id <id> (ask the server operator which one)',
    );
  const deviceUrl = checkUrl(endpoints.deviceAuthorizationUrl, 'device authorization endpoint');
  const tokenUrl = checkUrl(endpoints.tokenUrl, 'token endpoint');
  const scope = opts.scope ?? (endpoints.scopes?.length ? endpoints.scopes.join(' ') : 'openid');
  return { deviceUrl, tokenUrl, clientId, scope };
}

/** Asks the issuer for a device code and prints where to enter it; how often to poll, and until when. */
async function startDeviceLogin(
  deviceUrl: string,
  clientId: string,
  scope: string,
  print: (line: string) => void,
  signal: AbortSignal,
): Promise<{ deviceCode: string; interval: number; deadline: number }> {
  const started = await post(deviceUrl, { client_id: clientId, scope }, signal, 'device authorization endpoint');
  if (started.status !== 200) {
    const { error, description } = oauthError(started.body);
    throw authError(
      `the issuer refused to start a device login: ${error}${description}`,
      error === 'invalid_client' ? 'check the OAuth client id (--client-id)' : 'ask the server operator',
    );
  }
  const deviceCode = asString(started.body['device_code']);
  const userCode = asString(started.body['user_code']);
  const verificationUri = asString(started.body['verification_uri']);
  if (!deviceCode || !userCode || !verificationUri)
    throw unreachable(
      'the device authorization endpoint answered without device_code, user_code or verification_uri',
      'check that the issuer supports the device flow (RFC 8628)',
    );
  const complete = asString(started.body['verification_uri_complete']);
  print(`To log in, open ${verificationUri} and enter the code ${userCode}`);
  if (complete) print(`(or open ${complete})`);
  print('Waiting for the login to be approved…');

  const givenInterval = started.body['interval'];
  const interval =
    typeof givenInterval === 'number' && Number.isFinite(givenInterval) && givenInterval > 0
      ? Math.min(givenInterval, 600)
      : DEFAULT_INTERVAL_S;
  const expiresIn = started.body['expires_in'];
  const lifetime = typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 900;
  return { deviceCode, interval, deadline: Date.now() + lifetime * 1000 };
}

/**
 * Logs in with the device flow: asks the issuer for a code, prints where to enter it, then polls
 * the token endpoint until the user approves (or denies, or the code expires). Every failure is a
 * CliError with a hint; aborting `signal` ends it with 'INTERRUPTED'.
 */
export async function deviceLogin(opts: {
  card: Record<string, unknown>;
  clientId?: string;
  scope?: string;
  print: (line: string) => void;
  signal: AbortSignal;
}): Promise<{ accessToken: string; refreshToken?: string; expiresAt?: number; tokenUrl: string; clientId: string }> {
  const { signal } = opts;
  const { deviceUrl, tokenUrl, clientId, scope } = await deviceEndpoints(opts, signal);
  const started = await startDeviceLogin(deviceUrl, clientId, scope, opts.print, signal);
  const { deviceCode, deadline } = started;
  let { interval } = started;
  const unit = msPerSecond();
  const expired = (): CliError => authError('the device code expired before the login was approved');

  for (;;) {
    if (Date.now() >= deadline) throw expired();
    try {
      await delay(interval * unit, undefined, { signal });
    } catch {
      throw cancelled();
    }
    const polled = await post(
      tokenUrl,
      { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId },
      signal,
      'token endpoint',
    );
    if (polled.status === 200) return { ...tokens(polled.body, 'token endpoint'), tokenUrl, clientId };
    const { error, description } = oauthError(polled.body);
    switch (error) {
      case 'authorization_pending':
        continue;
      case 'slow_down':
        interval += SLOW_DOWN_S;
        opts.print(`The issuer asked to poll more slowly: every ${interval} s`);
        continue;
      case 'access_denied':
        throw authError('the login was denied', 'approve the request at the issuer, or ask its administrator');
      case 'expired_token':
        throw expired();
      default:
        throw authError(`the issuer refused the login: ${error}${description}`);
    }
  }
}

/** A new access token from a refresh token (RFC 6749 §6). A refused refresh token means logging in again. */
export async function refreshAccessToken(opts: {
  tokenUrl: string;
  clientId: string;
  refreshToken: string;
}): Promise<{ accessToken: string; refreshToken?: string; expiresAt?: number }> {
  const tokenUrl = checkUrl(opts.tokenUrl, 'token endpoint');
  const res = await post(
    tokenUrl,
    { grant_type: 'refresh_token', refresh_token: opts.refreshToken, client_id: opts.clientId },
    new AbortController().signal,
    'token endpoint',
  );
  if (res.status === 200) return tokens(res.body, 'token endpoint');
  const { error, description } = oauthError(res.body);
  if (error === 'invalid_grant') throw authError(`the login has expired: the refresh token was refused${description}`);
  throw authError(`the issuer refused to refresh the login: ${error}${description}`);
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger, Principal } from '../../application/index.ts';
import type { AgentCardProvider } from '../a2a/agent-card.ts';
import { parseVersion, type ProtocolVersion } from '../a2a/versions.ts';
import { resultText } from '../jsonrpc/envelope.ts';
import { invalidRequest, toErrorObject, type ErrorSurface } from '../jsonrpc/jsonrpc.errors.ts';
import { logAccess, type AccessRecord } from './access-log.ts';
import { authenticateRequest, AuthThrottle, throttledFor, type Authenticator } from './auth.ts';
import type { DispatchOutcome, Dispatcher } from './dispatcher.ts';
import { malformedRequest, readBody, writable } from './http-body.ts';
import { activateExtension, serveCard } from './http-card.ts';
import {
  acceptsSse,
  authSurface,
  header,
  JSON_TYPE,
  peek,
  requestSignal,
  rpcError,
  sendJson,
  sendText,
  statusForError,
  track,
  tooLarge,
} from './http-response.ts';
import { serveMetrics, type MetricsExposition } from './metrics-route.ts';
import { NO_REQUEST_TELEMETRY, type RequestTelemetry } from './request-telemetry.ts';
import { correlationIdNow, NO_PROXIES, REQUEST_ID_HEADER, scoped, type TrustedProxies } from './request-origin.ts';
import { shutdownFarewell, SseStreams } from './sse-streams.ts';

export interface HttpServerOptions {
  dispatcher: Dispatcher;
  card: AgentCardProvider;
  auth: Authenticator;
  logger: Logger;
  maxBodyBytes?: number | undefined;
  /** Time allowed to receive a whole request. */
  requestTimeoutMs?: number;
  heartbeatMs?: number;
  /** Readiness beyond liveness (e.g. storage reachable). */
  ready?: () => Promise<boolean>;
  /** Refused authentications per credential and address before 429 (default: 10 a minute; see AuthThrottle); null turns it off. */
  authThrottle?: AuthThrottle | null;
  /** Spans and request metrics (default: none). */
  telemetry?: RequestTelemetry | undefined;
  /** `GET /metrics` for administrators (absent: 404). */
  metrics?: MetricsExposition | undefined;
  /** Proxies whose `X-Forwarded-For` names the client (default: none; every client is its socket). */
  trustedProxies?: TrustedProxies;
}

/**
 * A2A over HTTP: JSON-RPC at POST /a2a and POST /, SSE for the streaming methods, the Agent Card
 * at the well-known paths, /health and /ready. Every JSON-RPC request needs the bearer token.
 */
export class A2aHttpServer {
  private readonly server: Server;
  private readonly sse: SseStreams;
  private readonly maxBody: number;
  /** Draining: /ready answers 503 so that balancers send new clients elsewhere; all else is served. */
  private draining = false;
  /** No longer accepting connections. */
  private closing = false;
  /** Resolves once the server no longer listens and its last connection is gone. */
  private closed: Promise<void> | undefined;
  private readonly throttle: AuthThrottle | null;
  private readonly proxies: TrustedProxies;

  private readonly opts: HttpServerOptions;

  constructor(opts: HttpServerOptions) {
    this.opts = opts;
    this.throttle = opts.authThrottle === undefined ? new AuthThrottle() : opts.authThrottle;
    this.maxBody = opts.maxBodyBytes ?? 1024 * 1024;
    this.proxies = opts.trustedProxies ?? NO_PROXIES;
    this.sse = new SseStreams(opts.heartbeatMs ?? 15_000, opts.logger);
    const handle = (req: IncomingMessage, res: ServerResponse): void =>
      scoped(req, res, (requestId) =>
        this.route(req, res).catch((err: unknown) => {
          opts.logger.error({ err, correlationId: requestId }, 'http handler failed');
          if (!res.headersSent && writable(res))
            sendJson(res, 500, { jsonrpc: '2.0', id: null, error: toErrorObject(err, 'extension', requestId) });
          else res.destroy();
        }),
      );
    this.server = createServer(handle);
    // A body announced too large is refused before the client sends it (RFC 9110 §10.1.1).
    this.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (Number(header(req, 'content-length') ?? '0') > this.maxBody)
        return scoped(req, res, () => tooLarge(req, res, this.maxBody));
      res.writeContinue();
      handle(req, res);
    });
    this.server.on('clientError', malformedRequest);
    this.server.requestTimeout = opts.requestTimeoutMs ?? 30_000;
    this.server.headersTimeout = Math.min(this.server.requestTimeout, 20_000);
    this.server.keepAliveTimeout = 5_000;
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** SSE streams open now (a metric). */
  get openStreams(): number {
    return this.sse.size;
  }

  /**
   * A graceful stop's first step: /ready answers 503 (a balancer stops sending new requests here)
   * while everything else, new connections included, is served as before.
   */
  beginDrain(): void {
    this.draining = true;
  }

  /**
   * Stops accepting connections; requests in flight and open streams go on. Resolves once the
   * last connection is gone ({@link close} and its grace period see to that).
   */
  stopAccepting(): Promise<void> {
    this.draining = true;
    this.closing = true;
    // Once: a second server.close() would call back at once (not running) and not wait.
    this.closed ??= new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    return this.closed;
  }

  /**
   * Stops accepting (if not yet), ends the open streams, each with a last event saying the server
   * is shutting down, and gives requests still in flight `graceMs` before their connections are cut.
   */
  async close(graceMs = 5_000): Promise<void> {
    const closed = this.stopAccepting();
    this.sse.endAll();
    this.server.closeIdleConnections();
    const timer = setTimeout(() => this.server.closeAllConnections(), graceMs);
    await closed;
    clearTimeout(timer);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Draining: a keep-alive client reconnects for its next request, and the balancer sends it elsewhere.
    if (this.draining) res.setHeader('connection', 'close');
    const raw = req.url ?? '/';
    // The JSON-RPC endpoint is hit thousands of times a second: its plain form skips the URL parser.
    const url = raw === '/a2a' || raw === '/' ? undefined : new URL(raw, 'http://localhost');
    const path = url ? url.pathname : raw;
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (url && (path === '/.well-known/agent-card.json' || path === '/.well-known/agent.json'))
        return serveCard(this.opts.card, req, res, url);
      if (path === '/openrpc.json') return sendJson(res, 200, this.opts.card.openRpc(), req.method === 'HEAD');
      if (path === '/health')
        return sendJson(res, this.closing ? 503 : 200, { status: this.closing ? 'shutting-down' : 'ok' });
      if (path === '/ready') {
        // A readiness probe that fails (storage down) means not ready, not a server error.
        const ready = !this.draining && (this.opts.ready ? await this.opts.ready().catch(() => false) : true);
        return sendJson(res, ready ? 200 : 503, this.draining ? { ready, status: 'draining' } : { ready });
      }
      if (path === '/metrics' && this.opts.metrics)
        return serveMetrics(req, res, this.opts.metrics, this.opts.auth, this.throttle);
    }
    if (path === '/a2a' || path === '/') {
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        return sendJson(
          res,
          405,
          rpcError(null, invalidRequest(`use POST for JSON-RPC (got ${req.method ?? '?'})`), 'extension'),
        );
      }
      const started = performance.now();
      const requestId = res.getHeader(REQUEST_ID_HEADER) as string;
      const rec: AccessRecord = {
        transport: 'http',
        method: undefined,
        principal: undefined,
        outcome: 'ok',
        status: 200,
        ms: 0,
        requestId,
        client: this.proxies.clientOf(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for']),
        correlationId: requestId,
      };
      track(res, rec);
      const observed = (this.opts.telemetry ?? NO_REQUEST_TELEMETRY).begin('http', header(req, 'traceparent'));
      try {
        return await observed.run(() => this.serveRpc(req, res, url, rec));
      } finally {
        rec.status = res.statusCode;
        logAccess(this.opts.logger, rec, started);
        observed.end(rec);
      }
    }
    return sendJson(res, 404, {
      error: 'not found',
      hint: 'JSON-RPC is served at POST /a2a; the Agent Card at /.well-known/agent-card.json',
    });
  }

  private async serveRpc(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL | undefined,
    rec: AccessRecord,
  ): Promise<void> {
    const type = (header(req, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    const body = await this.receive(req, res);
    if (!body) return;
    const client = rec.client ?? '';
    const principal = await this.authenticate(req, res, url, rec, body, client);
    if (!principal) return;
    rec.principal = principal.id;
    if (type !== JSON_TYPE && type !== 'application/a2a+json') {
      return sendJson(
        res,
        415,
        rpcError(null, invalidRequest(`Content-Type must be application/json (got ${type || 'none'})`), 'extension'),
      );
    }

    let version: ProtocolVersion | undefined;
    try {
      version = parseVersion(header(req, 'a2a-version') ?? url?.searchParams.get('A2A-Version'));
    } catch (err) {
      return sendJson(res, 200, rpcError(peek(body).id, err, 'a2a-v1'));
    }
    const surface: ErrorSurface = version === '1.0' ? 'a2a-v1' : 'extension';
    const read = this.opts.dispatcher.read(body.toString('utf8'), surface);
    if (!read.ok) return sendJson(res, 200, read.response);
    const parsed = read.message;
    const m = (parsed as { method?: unknown } | null)?.method;
    if (typeof m === 'string') rec.method = m;
    res.setHeader('a2a-version', version ?? '0.3');
    const extensionVersion = activateExtension(req, res);
    const signal = requestSignal(res);
    const lastEventId = header(req, 'last-event-id');
    const lastEventSeq = lastEventId !== undefined && /^\d+$/.test(lastEventId) ? Number(lastEventId) : undefined;
    const outcome = await this.opts.dispatcher.dispatch(parsed, {
      principal,
      version,
      get signal() {
        return signal();
      },
      lastEventSeq,
      extensionVersion,
      client,
    });
    if (outcome.kind !== 'notification') rec.correlationId = outcome.correlationId;
    return this.answer(
      req,
      res,
      outcome,
      version,
      () => this.opts.dispatcher.isStreamingRequest(parsed, version),
      signal,
    );
  }

  /** The request's body, or undefined when it was refused (too large, or cut short). */
  private async receive(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
    const declared = Number(header(req, 'content-length') ?? '0');
    if (declared > this.maxBody) return void tooLarge(req, res, this.maxBody);
    const body = await readBody(req, this.maxBody);
    if (body === 'too-large') return void tooLarge(req, res, this.maxBody);
    if (body === 'incomplete') {
      // The client stopped before sending what its Content-Length announced.
      if (writable(res)) res.setHeader('connection', 'close');
      return void sendJson(
        res,
        400,
        rpcError(null, invalidRequest('the request body ended before its Content-Length'), 'extension'),
      );
    }
    return body;
  }

  /** The caller, or undefined when refused (and answered). */
  private async authenticate(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL | undefined,
    rec: AccessRecord,
    body: Buffer,
    client: string,
  ): Promise<Principal | undefined> {
    try {
      return await authenticateRequest(
        this.opts.auth,
        this.throttle,
        { authorization: header(req, 'authorization'), apiKey: header(req, 'x-api-key'), client },
        req.socket,
      );
    } catch (err) {
      // Throttled: 429 with Retry-After; a refused credential: 401; the account store or the
      // issuer unreachable: 503 (the total table decides), which is no failed login.
      const wait = throttledFor(err);
      if (wait !== undefined) res.setHeader('retry-after', String(wait));
      const status = wait !== undefined ? 429 : statusForError(err);
      if (status === 401) res.setHeader('www-authenticate', 'Bearer realm="cleveragents"');
      this.refuseCaller(req, res, url, rec, body, status, err);
      return undefined;
    }
  }

  /** Sends the dispatcher's outcome: no content, one JSON answer, or an SSE stream. */
  private async answer(
    req: IncomingMessage,
    res: ServerResponse,
    outcome: DispatchOutcome,
    version: ProtocolVersion | undefined,
    streamingMethod: () => boolean,
    signal: () => AbortSignal,
  ): Promise<void> {
    if (outcome.kind === 'notification') {
      res.statusCode = 204;
      res.end();
      return;
    }
    const wantsStream = outcome.kind === 'stream' || streamingMethod();
    if (outcome.kind === 'response') {
      // Over a per-user limit: 429 with Retry-After, as JSON even for a stream (none started).
      if (outcome.retryAfterSeconds !== undefined) {
        res.setHeader('retry-after', String(outcome.retryAfterSeconds));
        return sendJson(res, 429, outcome.response);
      }
      // Errors of streaming methods go out as an SSE event when the client asked for a stream.
      if (wantsStream && 'error' in outcome.response && acceptsSse(req))
        return this.sse.send(res, [{ seq: 0, response: outcome.response }], signal());
      if (outcome.resultJson !== undefined)
        return sendText(res, 200, resultText(outcome.response.id, outcome.resultJson));
      return sendJson(res, 200, outcome.response);
    }
    const correlationId = outcome.correlationId ?? correlationIdNow();
    return this.sse.send(res, outcome.events, signal(), () => shutdownFarewell(outcome.id, version, correlationId));
  }

  /**
   * Answers a request refused before it is authenticated. Nothing runs without a valid token; the
   * method name only picks the error's dialect (and names the request in the access log).
   */
  private refuseCaller(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL | undefined,
    rec: AccessRecord,
    body: Buffer,
    status: number,
    err: unknown,
  ): void {
    const { id, method } = peek(body);
    rec.method = method?.slice(0, 200);
    sendJson(
      res,
      status,
      rpcError(id, err, authSurface(method, header(req, 'a2a-version') ?? url?.searchParams.get('A2A-Version'))),
    );
  }
}

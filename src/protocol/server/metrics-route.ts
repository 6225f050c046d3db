/**
 * `GET /metrics`: the Prometheus exposition, for administrators only (the server token or an
 * administrator's key). Metrics name methods, principals' counts and the database's state: not for
 * members. Served only when metrics are on; otherwise the path is a plain 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../domain/errors.ts';
import { authenticateRequest, throttledFor, type AuthThrottle, type Authenticator } from './auth.ts';
import { header, sendJson, statusForError } from './http-response.ts';

/** What the endpoint serves (the Prometheus registry, in the composition root). */
export interface MetricsExposition {
  readonly contentType: string;
  render(): Promise<string>;
}

export async function serveMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  metrics: MetricsExposition,
  auth: Authenticator,
  throttle: AuthThrottle | null,
): Promise<void> {
  const client = req.socket.remoteAddress ?? '';
  let admin: boolean;
  try {
    const principal = await authenticateRequest(
      auth,
      throttle,
      { authorization: header(req, 'authorization'), apiKey: header(req, 'x-api-key'), client },
      req.socket,
    );
    admin = principal.admin;
  } catch (err) {
    const wait = throttledFor(err);
    if (wait !== undefined) res.setHeader('retry-after', String(wait));
    const status = wait !== undefined ? 429 : statusForError(err);
    if (status === 401) res.setHeader('www-authenticate', 'Bearer realm="cleveragents"');
    return sendJson(res, status, { error: err instanceof AppError ? err.message : 'authentication failed' });
  }
  if (!admin)
    return sendJson(res, 403, {
      error: 'metrics are for administrators',
      hint: 'scrape with the server token or an administrator’s API key',
    });
  let text: string;
  try {
    text = await metrics.render();
  } catch (err) {
    return sendJson(res, 503, { error: `metrics could not be collected: ${err instanceof Error ? err.message : ''}` });
  }
  res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : text);
}

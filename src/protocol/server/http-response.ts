import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAppError } from '../../domain/errors.ts';
import { HTTP_STATUS } from '../jsonrpc/codes.ts';
import type { JsonRpcResponse } from '../jsonrpc/envelope.ts';
import { invalidRequest, toErrorObject, type ErrorSurface } from '../jsonrpc/jsonrpc.errors.ts';
import { noteResponse, type AccessRecord } from './access-log.ts';
import { DRAIN_BYTES, DRAIN_MS, drain, writable } from './http-body.ts';
import { correlationIdNow } from './request-origin.ts';

// Reading a request's headers and writing its answer: what every HTTP route shares.

/** The access record of the request a response answers (the JSON-RPC answer is noted as it is sent). */
const ACCESS = Symbol('access');
type Tracked = ServerResponse & { [ACCESS]?: AccessRecord };

export const JSON_TYPE = 'application/json';

/** Ties a response to its request's access record, so what is sent is noted there. */
export function track(res: ServerResponse, rec: AccessRecord): void {
  (res as Tracked)[ACCESS] = rec;
}

/** Notes a JSON-RPC answer (its error, if any) on the request's access record. */
export function noteAnswer(res: ServerResponse, response: JsonRpcResponse): void {
  const rec = (res as Tracked)[ACCESS];
  if (rec) noteResponse(rec, response);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headOnly = false): void {
  if (!writable(res)) return;
  if (status !== 200 || (body as { error?: unknown } | null)?.error !== undefined)
    noteAnswer(res, body as JsonRpcResponse);
  sendText(res, status, JSON.stringify(body), headOnly);
}

/** A JSON body already serialised. */
export function sendText(res: ServerResponse, status: number, text: string, headOnly = false): void {
  if (!writable(res)) return;
  res.writeHead(status, { 'content-type': `${JSON_TYPE}; charset=utf-8`, 'content-length': Buffer.byteLength(text) });
  res.end(headOnly ? undefined : text);
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function acceptsSse(req: IncomingMessage): boolean {
  return (header(req, 'accept') ?? '').includes('text/event-stream');
}

/** Extension methods answer auth failures in the platform taxonomy; everything else as A2A does. */
export function authSurface(method: string | undefined, version: string | null | undefined): ErrorSurface {
  if (method?.startsWith('_cleveragents/')) return 'extension';
  return version?.trim().startsWith('1.') ? 'a2a-v1' : 'a2a-v03';
}

/** The id and method of a body not yet (or not) parsed as a request: read once, for an early answer. */
export function peek(body: Buffer): { id: string | number | null; method: string | undefined } {
  try {
    const msg = JSON.parse(body.toString('utf8')) as { id?: unknown; method?: unknown } | null;
    const id = msg?.id;
    const method = msg?.method;
    return {
      id: typeof id === 'string' || typeof id === 'number' ? id : null,
      method: typeof method === 'string' ? method : undefined,
    };
  } catch {
    return { id: null, method: undefined };
  }
}

export function rpcError(id: string | number | null, err: unknown, surface: ErrorSurface): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: toErrorObject(err, surface, correlationIdNow()) };
}

/** The HTTP status of an error that stops a request before JSON-RPC answers it: the total table decides. */
export const statusForError = (err: unknown): number => (isAppError(err) ? HTTP_STATUS[err.reason] : 500);

/**
 * The request's AbortSignal, made only when something asks for it (streams do; most unary
 * methods never look): an AbortController per request was a visible share of a GetTask. Only a
 * client that goes away before the answer is complete cancels the request.
 */
export function requestSignal(res: ServerResponse): () => AbortSignal {
  let abort: AbortController | undefined;
  let gone = false;
  res.on('close', () => {
    if (res.writableFinished) return;
    gone = true;
    abort?.abort();
  });
  return () => {
    if (!abort) {
      abort = new AbortController();
      if (gone) abort.abort();
    }
    return abort.signal;
  };
}

/**
 * 413, readable by a client still uploading: the answer goes out at once, but the connection is
 * closed only once the rest of the body has been read (and dropped). Closing with unread data
 * makes the kernel reset the connection, and the client then sees ECONNRESET/EPIPE instead of
 * the 413 (RFC 9112 §9.6). Draining is bounded in bytes and time; past that the socket goes.
 */
export function tooLarge(req: IncomingMessage, res: ServerResponse, maxBody: number): void {
  if (!writable(res)) return;
  const text = JSON.stringify(
    rpcError(null, invalidRequest(`request body exceeds the limit of ${maxBody} bytes`), 'extension'),
  );
  res.writeHead(413, {
    'content-type': `${JSON_TYPE}; charset=utf-8`,
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  });
  res.write(text);
  void drain(req, DRAIN_BYTES, DRAIN_MS).then((complete) => {
    res.end();
    if (!complete) res.destroy();
  });
}

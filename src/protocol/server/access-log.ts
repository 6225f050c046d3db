import type { Logger } from '../../application/index.ts';
import type { JsonRpcResponse } from '../jsonrpc/envelope.ts';

/**
 * One access log line per request, at info level: who called what (from where), how it ended, how
 * long it took, the request id and the correlation id (the one a client sees in `error.data`). Both transports fill one
 * of these per request and log it once, when the answer (or the stream) is complete.
 */
export interface AccessRecord {
  transport: 'http' | 'stdio';
  /** The JSON-RPC method, when the request named one. */
  method: string | undefined;
  principal: string | undefined;
  /** `ok`, `cancelled` (stdio `$/cancelRequest`), or the JSON-RPC error code of the answer. */
  outcome: 'ok' | 'cancelled' | number;
  /** HTTP only: the status sent. */
  status?: number | undefined;
  ms: number;
  /** HTTP only: the request's id (the client's `X-Request-Id`, or one made for it), echoed in the answer's header. */
  requestId?: string | undefined;
  /** HTTP only: the client's address (behind a trusted proxy, the one it forwarded). */
  client?: string | undefined;
  /** The id of the answer's error (`error.data.correlationId`); over HTTP the request id, unless a storage failure logged under its own. */
  correlationId: string | undefined;
}

/** Folds the answer sent into the record: its error code and correlation id, if it is an error. */
export function noteResponse(rec: AccessRecord, response: JsonRpcResponse): void {
  if (!('error' in response) || !response.error) return;
  rec.outcome = response.error.code;
  const cid = (response.error.data as { correlationId?: unknown } | undefined)?.correlationId;
  if (typeof cid === 'string') rec.correlationId = cid;
}

export function logAccess(logger: Logger, rec: AccessRecord, startedAt: number): void {
  rec.ms = Math.round((performance.now() - startedAt) * 1000) / 1000;
  logger.info(rec, 'request');
}

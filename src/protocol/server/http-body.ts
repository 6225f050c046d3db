import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { invalidRequest, newCorrelationId, toErrorObject } from '../jsonrpc/jsonrpc.errors.ts';

/**
 * Reading request bodies for the HTTP server, and answering what Node's parser refuses: the parts
 * that decide whether a hostile or broken client still gets an answer it can read.
 */

/** How much of a refused body is read before the connection closes, and for how long (see tooLarge). */
export const DRAIN_BYTES = 16 * 1024 * 1024;
export const DRAIN_MS = 5_000;

/**
 * The body, up to `limit` bytes: 'too-large' as soon as it passes the limit (the rest is left for
 * {@link drain}), 'incomplete' when the client stops before its end (a lying Content-Length, an
 * aborted upload).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'incomplete'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > limit) {
        chunks.length = 0;
        stop();
        req.pause();
        resolve('too-large');
        return;
      }
      chunks.push(c);
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onGone = (): void => {
      stop();
      resolve('incomplete');
    };
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    // 'close' before 'end': the connection went before the body was complete.
    req.on('close', onGone);
  });
}

/** Reads and drops the rest of a body; true if it ended within `maxBytes` and `maxMs`. */
export function drain(req: IncomingMessage, maxBytes: number, maxMs: number): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    let size = 0;
    const done = (complete: boolean): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.pause();
      resolve(complete);
    };
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > maxBytes) done(false);
    };
    const onEnd = (): void => done(true);
    const onClose = (): void => done(req.complete);
    const timer = setTimeout(() => done(false), maxMs);
    timer.unref();
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.resume();
  });
}

export const writable = (res: ServerResponse): boolean => !res.destroyed && !res.writableEnded;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
};

/**
 * A request Node's parser refused (a bad request line or header, broken chunked encoding, a
 * timeout): answered with a JSON error, like everything else this server says, then closed.
 */
export function malformedRequest(err: NodeJS.ErrnoException, socket: Duplex): void {
  const inProgress =
    (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (err.code === 'ECONNRESET' || !socket.writable || inProgress) {
    socket.destroy();
    return;
  }
  const status =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? 413
          : 400;
  const what =
    status === 408
      ? 'the request was not received in time'
      : status === 431
        ? 'the request headers are too large'
        : 'malformed HTTP request';
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: toErrorObject(invalidRequest(what), 'extension', newCorrelationId()),
  });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Bad Request'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * The node:http plumbing the two floors share (floor.ts, persisted-floor.ts): a JSON answer with
 * its length, and a loopback listener that prints the port the bench waits for.
 */
import type { Server, ServerResponse } from 'node:http';

/** Sends `text` (already JSON) with its length, so that keep-alive needs no chunked encoding. */
export function sendJson(res: ServerResponse, text: string, status = 200): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Listens on 127.0.0.1, a free port, and prints `listening on 127.0.0.1:<port>` (bench/lib/servers.ts). */
export function listenOnLoopback(server: Server): void {
  server.keepAliveTimeout = 5_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`listening on 127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  });
}

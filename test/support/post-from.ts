/**
 * One JSON-RPC request over HTTP from a chosen local address (127.0.0.x on Linux), on a
 * connection of its own: to act as several clients, e.g. the people behind one NAT and an
 * attacker among them, against one server on 127.0.0.1.
 */
import http from 'node:http';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
}

/** `credential`: a bearer token, or headers to send (e.g. `{ 'x-api-key': … }`), or none. */
export function postFrom(
  baseUrl: string,
  from: string,
  credential: string | Record<string, string> | undefined,
  body: unknown,
): Promise<Answer> {
  const url = new URL('/a2a', baseUrl);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        // A new connection per request: a keep-alive one could answer from an earlier check.
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          'a2a-version': '1.0',
          'a2a-extensions': 'urn:cleveragents:extensions:v1',
          ...(typeof credential === 'string' ? { authorization: `Bearer ${credential}` } : credential),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: raw ? (JSON.parse(raw) as Answer['body']) : {},
          });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

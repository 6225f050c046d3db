/**
 * The fixture MCP server over streamable HTTP (the same tools as the stdio fixture), on 127.0.0.1
 * and an ephemeral port, one server per session. `crash` drops every open connection and forgets
 * every session (the listener stays up, so the next connect works).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createFixtureServer, type FixtureState } from './mcp-fixture-tools.ts';

export interface HttpFixtureOptions {
  /** Answer 401 to any request whose Authorization header is not exactly this. */
  requireAuthorization?: string;
  /** Where `write_note` writes. */
  fixtureDir?: string;
}

export interface HttpFixture {
  /** The endpoint (http://127.0.0.1:<port>/mcp). */
  url: string;
  /** Every request's headers, in order. */
  requests: http.IncomingHttpHeaders[];
  state: FixtureState;
  /** How many sessions were opened. */
  sessions(): number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

export async function startHttpFixture(options: HttpFixtureOptions = {}): Promise<HttpFixture> {
  const state: FixtureState = { cancelled: 0, running: 0 };
  const sessions = new Map<string, Session>();
  const sockets = new Set<Socket>();
  const requests: http.IncomingHttpHeaders[] = [];
  let opened = 0;

  const drop = (): void => {
    for (const s of sockets) s.destroy();
    const all = [...sessions.values()];
    sessions.clear();
    setImmediate(() => all.forEach((s) => void s.close().catch(() => {})));
  };

  const newSession = (): Session => {
    opened += 1;
    const server = createFixtureServer({ instance: opened, state, fixtureDir: options.fixtureDir, crash: drop });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, session),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const session: Session = { transport, close: () => server.close() };
    transport.onerror = () => {};
    server.connect(transport).catch(() => {});
    return session;
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    requests.push(req.headers);
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return void res.writeHead(404).end();
    if (options.requireAuthorization !== undefined && req.headers.authorization !== options.requireAuthorization)
      return void res.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized');
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (typeof id === 'string' && !known) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
      );
    }
    await (known ?? newSession()).transport.handleRequest(req, res);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    state,
    sessions: () => opened,
    close: async () => {
      drop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

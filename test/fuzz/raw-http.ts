/** Raw HTTP/1.1 over a socket: what a hostile client can send that fetch would not, and what came back. */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Bytes after the last complete response (a response cut short). */
  rest: string;
  /** The connection was reset rather than closed. */
  reset: boolean;
}

export interface RawOptions {
  /** Written in order; a number pauses that many milliseconds (a slow client). */
  chunks: Array<string | Buffer | number>;
  /** Half-close after the last chunk (the default), or leave the sending side open. */
  end?: boolean;
  /** Give up after this long and close (bounded: no case waits on the server's own timeouts). */
  timeoutMs?: number;
  /** Close abruptly after the chunks, without reading the answer (an aborted client). */
  abort?: boolean;
}

/** Sends `chunks` on a fresh connection and collects everything the server answers until it closes. */
export function rawHttp(port: number, opts: RawOptions): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    let reset = false;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponses(Buffer.concat(got).toString('latin1'), reset));
    };
    const timer = setTimeout(finish, opts.timeoutMs ?? 3000);
    socket.on('data', (c: Buffer) => got.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') reset = true;
      finish();
    });
    socket.on('close', finish);
    const writeAll = async (): Promise<void> => {
      for (const c of opts.chunks) {
        if (finished) return;
        if (typeof c === 'number') await new Promise((r) => setTimeout(r, c));
        else socket.write(c);
      }
      if (opts.abort) return finish();
      if (opts.end !== false) socket.end();
    };
    socket.on('connect', () => void writeAll());
  });
}

function parseResponses(text: string, reset: boolean): RawExchange {
  const responses: RawResponse[] = [];
  let rest = text;
  for (;;) {
    const head = rest.indexOf('\r\n\r\n');
    if (head === -1) break;
    const lines = rest.slice(0, head).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!m) break;
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    let body: string;
    let after: string;
    const start = head + 4;
    if (headers['transfer-encoding']?.includes('chunked')) {
      let pos = start;
      body = '';
      for (;;) {
        const nl = rest.indexOf('\r\n', pos);
        if (nl === -1) return { responses, rest, reset };
        const size = parseInt(rest.slice(pos, nl), 16);
        if (Number.isNaN(size)) return { responses, rest, reset };
        pos = nl + 2;
        if (size === 0) {
          pos = rest.indexOf('\r\n', pos) + 2;
          break;
        }
        body += rest.slice(pos, pos + size);
        pos += size + 2;
      }
      after = rest.slice(pos);
    } else {
      const len = Number(headers['content-length'] ?? (m[1] === '204' || m[1] === '304' ? 0 : NaN));
      if (Number.isNaN(len)) {
        body = rest.slice(start);
        after = '';
      } else {
        if (rest.length < start + len) break;
        body = rest.slice(start, start + len);
        after = rest.slice(start + len);
      }
    }
    responses.push({ status: Number(m[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') });
    rest = after;
  }
  return { responses, rest, reset };
}

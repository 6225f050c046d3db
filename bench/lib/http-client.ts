/**
 * A minimal HTTP/1.1 client over raw sockets, for load generation. node:http's client costs about
 * as much CPU per request as a bare node:http server, so with it the load generator (not the
 * server) would set the ceiling of the floor measurements. This one sends pre-built request bytes
 * over keep-alive connections, one request at a time per connection, and understands exactly what
 * the servers under test answer: Content-Length bodies and chunked bodies (SSE).
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  body: Buffer;
}

export interface StreamHandlers {
  /** Called with each piece of the (de-chunked) body as it arrives. */
  onData(piece: Buffer): void;
}

interface Pending {
  resolve(r: RawResponse): void;
  reject(e: Error): void;
  stream?: StreamHandlers | undefined;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Builds the bytes of one POST request (computed once, sent many times). */
export function postBytes(port: number, path: string, headers: Record<string, string>, body: string): Buffer {
  const b = Buffer.from(body, 'utf8');
  let head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), b]);
}

/** One keep-alive connection; requests on it are strictly sequential. */
export class RawConnection {
  private buf: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  private state: 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailer' = 'head';
  private status = 0;
  private remaining = 0;
  private chunked = false;
  private parts: Buffer[] = [];
  private closed = false;

  private readonly socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = connect({ port, host }, () => {
        s.off('error', reject);
        resolve(new RawConnection(s));
      });
      s.once('error', reject);
    });
  }

  /** Sends a request and resolves with the whole response (the body is collected unless streamed). */
  request(bytes: Buffer, stream?: StreamHandlers): Promise<RawResponse> {
    if (this.pending) return Promise.reject(new Error('a request is already in flight on this connection'));
    if (this.closed) return Promise.reject(new Error('connection closed'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, stream };
      this.socket.write(bytes);
    });
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private fail(e: Error): void {
    this.closed = true;
    const p = this.pending;
    this.pending = undefined;
    p?.reject(e);
  }

  private emit(piece: Buffer): void {
    const s = this.pending?.stream;
    if (s) s.onData(piece);
    else this.parts.push(piece);
  }

  private finish(): void {
    const p = this.pending;
    this.pending = undefined;
    const body = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    this.parts = [];
    this.state = 'head';
    p?.resolve({ status: this.status, body });
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      if (this.state === 'head') {
        const end = this.buf.indexOf(CRLFCRLF);
        if (end === -1) return;
        const head = this.buf.toString('latin1', 0, end);
        this.buf = this.buf.subarray(end + 4);
        this.status = Number(head.slice(9, 12));
        const lower = head.toLowerCase();
        this.chunked = lower.includes('transfer-encoding: chunked');
        if (this.chunked) {
          this.state = 'chunk-size';
        } else {
          const m = /content-length:\s*(\d+)/.exec(lower);
          this.remaining = m ? Number(m[1]) : 0;
          this.state = 'length';
        }
      }
      if (this.state === 'length') {
        if (this.buf.length < this.remaining) return;
        this.emit(this.buf.subarray(0, this.remaining));
        this.buf = this.buf.subarray(this.remaining);
        this.finish();
        continue;
      }
      if (this.state === 'chunk-size') {
        const nl = this.buf.indexOf('\r\n');
        if (nl === -1) return;
        this.remaining = parseInt(this.buf.toString('latin1', 0, nl), 16);
        this.buf = this.buf.subarray(nl + 2);
        this.state = this.remaining === 0 ? 'trailer' : 'chunk-data';
      }
      if (this.state === 'chunk-data') {
        if (this.buf.length === 0) return;
        const n = Math.min(this.remaining, this.buf.length);
        this.emit(this.buf.subarray(0, n));
        this.buf = this.buf.subarray(n);
        this.remaining -= n;
        if (this.remaining > 0) return;
        this.state = 'chunk-crlf';
      }
      if (this.state === 'chunk-crlf') {
        if (this.buf.length < 2) return;
        this.buf = this.buf.subarray(2);
        this.state = 'chunk-size';
        continue;
      }
      if (this.state === 'trailer') {
        if (this.buf.length < 2) return;
        this.buf = this.buf.subarray(2);
        this.finish();
        continue;
      }
      return;
    }
  }
}

/**
 * Splits an SSE body into events and hands each `data:` payload on. Events are separated by a
 * blank line; comment lines (`: ping`) are skipped.
 */
export class SseParser {
  private rest = '';
  private readonly onEvent: (data: string, id: string | undefined) => void;

  constructor(onEvent: (data: string, id: string | undefined) => void) {
    this.onEvent = onEvent;
  }

  push(piece: Buffer): void {
    const text = this.rest + piece.toString('utf8');
    let start = 0;
    for (let end = text.indexOf('\n\n', start); end !== -1; end = text.indexOf('\n\n', start)) {
      const block = text.slice(start, end);
      start = end + 2;
      let data: string | undefined;
      let id: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith('data:'))
          data = (data === undefined ? '' : `${data}\n`) + line.slice(line.charAt(5) === ' ' ? 6 : 5);
        else if (line.startsWith('id:')) id = line.slice(3).trim();
      }
      if (data !== undefined) this.onEvent(data, id);
    }
    this.rest = text.slice(start);
  }
}

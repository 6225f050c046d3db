/**
 * Who sent a request and under which id: the request id a client (or its proxy) passes in
 * `X-Request-Id`, and the client's address — the socket's, or behind proxies the operator trusts,
 * the one those proxies put in `X-Forwarded-For`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { currentRequest, inRequestScope } from '../../application/index.ts';
import { newCorrelationId } from '../jsonrpc/jsonrpc.errors.ts';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Printable ASCII, at most 128 characters: what goes into a log line and a header unchanged. */
const VALID_REQUEST_ID = /^[\x20-\x7e]{1,128}$/;

/**
 * The client's request id when it sent a usable one, else a new one. A malformed id (too long,
 * control characters, non-ASCII) is replaced rather than refused: the request itself is fine, and
 * the id only has to be one the log and the answer can carry.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  const id = Array.isArray(given) ? given[0] : given;
  return id !== undefined && VALID_REQUEST_ID.test(id) ? id : randomUUID();
}

/**
 * Runs a request's handling in its scope: its id (the client's `X-Request-Id`, or a new one) is
 * echoed in the answer's header, names every log line written for it and is the correlation id of
 * an error it gets.
 */
export function scoped(req: IncomingMessage, res: ServerResponse, fn: (requestId: string) => unknown): void {
  // A client that goes away mid-request makes these emit errors: they are the client's, and
  // an 'error' event nobody listens to would end the process.
  req.on('error', () => {});
  res.on('error', () => {});
  const requestId = requestIdOf(req);
  res.setHeader(REQUEST_ID_HEADER, requestId);
  inRequestScope({ requestId }, () => fn(requestId));
}

/** The correlation id of an error answered now: the request's id inside a request, else a new one. */
export const correlationIdNow = (): string => currentRequest()?.requestId ?? newCorrelationId();

/** `::ffff:10.0.0.1` (an IPv4 peer of a dual-stack socket) is 10.0.0.1. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The proxies the operator trusts to say who the client is (`--trust-proxy ADDR|CIDR`). Only a
 * request whose socket comes from one of them has its `X-Forwarded-For` read; anyone else could
 * write any address there.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly entries: readonly string[];

  /** Throws on an entry that is neither an address nor a CIDR range (a start-up error). */
  constructor(entries: readonly string[]) {
    this.entries = entries;
    for (const entry of entries) {
      const [address = '', bits, extra] = entry.trim().split('/');
      const family = isIP(address);
      const max = family === 4 ? 32 : 128;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (family === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max))
        throw new Error(`"${entry}" is not an IP address or CIDR range (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8)`);
      this.list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  get size(): number {
    return this.entries.length;
  }

  trusts(address: string): boolean {
    const a = plain(address);
    const family = isIP(a);
    return family !== 0 && this.list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  }

  /**
   * The client's address: the socket's, unless that is a trusted proxy; then the right-most
   * address of `X-Forwarded-For` that is not a trusted proxy (each proxy appends the address it
   * was reached from, so everything left of the first untrusted hop may be forged). A header
   * that holds only trusted hops, or garbage, leaves the socket's address.
   */
  clientOf(socketAddress: string, forwardedFor: string | string[] | undefined): string {
    const socket = plain(socketAddress);
    if (this.size === 0 || forwardedFor === undefined || !this.trusts(socket)) return socket;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
      .split(',')
      .map((h) => plain(h.trim()));
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i] ?? '';
      if (isIP(hop) === 0) return socket;
      if (!this.trusts(hop)) return hop;
    }
    return socket;
  }
}

/** No proxy is trusted: every client is its socket's address. */
export const NO_PROXIES = new TrustedProxies([]);

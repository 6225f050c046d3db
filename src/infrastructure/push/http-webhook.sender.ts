import dns from 'node:dns';
import net from 'node:net';
import type { WebhookSender } from '../../application/index.js';

export interface HttpWebhookSenderOptions {
  /**
   * Host names (as written in webhook URLs) that may resolve to loopback or private addresses,
   * e.g. `['127.0.0.1', 'localhost']` for a receiver on the same machine. Matched exactly,
   * case-insensitively; IPv6 literals without brackets.
   */
  allowHosts?: readonly string[];
  /** Name resolution (tests substitute it). Defaults to `dns.promises.lookup` of every address. */
  lookup?: (host: string) => Promise<readonly string[]>;
}

/** A webhook that must not be delivered; never retried into success. */
export class WebhookRefusedError extends Error {
  override readonly name = 'WebhookRefusedError';
  /** Retrying cannot help: the target itself is refused. */
  readonly permanent = true;
}

/**
 * Addresses a client-supplied webhook must not reach: loopback, private, link-local (cloud
 * metadata lives at 169.254.169.254), carrier-grade NAT, unspecified and multicast.
 */
const BLOCKED = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv6');
}

/** True when a webhook may not be sent to this IP address. */
export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 forms reach IPv4 hosts: judge the embedded address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) ?? /^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return BLOCKED.check(mapped[1], 'ipv4');
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex?.[1] && hex[2]) {
    const n = (parseInt(hex[1], 16) << 16) | parseInt(hex[2], 16);
    return BLOCKED.check([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'), 'ipv4');
  }
  return BLOCKED.check(address, 'ipv6');
}

const defaultLookup = async (host: string): Promise<string[]> =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Delivers push notifications with `fetch`: one POST, success only on 2xx, redirects refused
 * (a redirect could lead to an address the guard below never saw).
 *
 * The guard resolves the host and refuses it when any address is internal. `fetch` resolves the
 * name again when it connects, so a DNS answer that changes in between (rebinding) is not caught;
 * closing that gap needs a connection-level lookup hook, which global `fetch` does not expose.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly allow: ReadonlySet<string>;
  private readonly lookup: (host: string) => Promise<readonly string[]>;

  constructor(opts: HttpWebhookSenderOptions = {}) {
    this.allow = new Set((opts.allowHosts ?? []).map(normaliseHost));
    this.lookup = opts.lookup ?? defaultLookup;
  }

  async send(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<void> {
    const target = await this.check(url);
    const res = await fetch(target, { method: 'POST', headers, body, signal, redirect: 'manual' });
    // Release the connection; the receiver's answer carries nothing we use.
    await res.body?.cancel().catch(() => {});
    if (res.status < 200 || res.status > 299) {
      const what = res.status >= 300 && res.status < 400 ? 'redirected (redirects are not followed)' : 'answered';
      throw new Error(`webhook ${target.origin} ${what} with HTTP ${res.status}`);
    }
  }

  /** The URL to deliver to, or a {@link WebhookRefusedError} saying why not. */
  async check(url: string): Promise<URL> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new WebhookRefusedError('webhook URL is not a valid absolute URL');
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new WebhookRefusedError(`webhook URL must use http or https, not ${target.protocol.replace(/:$/, '')}`);
    }
    const host = normaliseHost(target.hostname);
    if (this.allow.has(host)) return target;
    let addresses: readonly string[];
    try {
      addresses = net.isIP(host) ? [host] : await this.lookup(host);
    } catch (err) {
      throw new Error(
        `webhook host ${host} could not be resolved: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    if (addresses.length === 0) throw new Error(`webhook host ${host} has no addresses`);
    const blocked = addresses.find(isBlockedAddress);
    if (blocked !== undefined) {
      throw new WebhookRefusedError(`webhook host ${host} resolves to ${blocked}, a loopback or private address`);
    }
    return target;
  }
}

/** URL host names come lower-cased with IPv6 in brackets; allow-list entries may be written either way. */
function normaliseHost(host: string): string {
  const h = host.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

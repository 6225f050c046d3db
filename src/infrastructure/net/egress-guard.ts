/**
 * One guard for every outbound URL a definition or a request can name (an actor's `baseUrl`, an
 * MCP server's `url`, hook webhooks, push configs): internal addresses — loopback, private,
 * link-local, and the IPv6 forms that carry one (ip-ranges.ts) — are refused unless a server
 * administrator allowlisted the host (`agents serve --allow-egress HOST[:PORT]`).
 *
 * Twice: when a URL is declared (`refusal`, `check`: the answer names the host, the address and
 * what to do), and when a connection is opened (`fetch`: undici's fetch through an Agent whose
 * connector judges the literal address or every address the name resolves to, then connects to
 * exactly those). A name that answers a public address when declared and 127.0.0.1 later
 * (DNS rebinding) is refused at connect time; so is every hop of a followed redirect.
 */
import dns from 'node:dns';
import net from 'node:net';
import type { Agent, buildConnector, fetch as undiciFetchType } from 'undici';
import type { EgressPolicy } from '../../application/index.ts';
import { EgressAllowlist } from './egress-allowlist.ts';
import { refusedAddressClass } from './ip-ranges.ts';

/** Resolves a host name to every address it has (tests substitute it). */
export type EgressLookup = (host: string) => Promise<readonly string[]>;

export interface EgressGuardOptions {
  /** `HOST` or `HOST:PORT` entries (see EgressAllowlist), or the parsed list. */
  allow?: readonly string[] | EgressAllowlist;
  /** Name resolution, at declare time and at connect time. Default: the system resolver, every address. */
  lookup?: EgressLookup;
  /** How long a declare-time lookup may take before the name counts as "does not resolve now" (ms; default 5000). */
  declareLookupMs?: number;
}

/** Why an outbound connection was refused. Permanent: retrying cannot help. */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError';
  readonly code = 'EGRESS_REFUSED';
  /** Push delivery does not retry it (WebhookSender's contract). */
  readonly permanent = true;
  /** The host as the URL names it (without brackets). */
  readonly host: string;

  constructor(message: string, host: string) {
    super(message);
    this.host = host;
  }
}

/** The egress refusal inside an error (fetch wraps it: `TypeError: fetch failed`, cause …), if any. */
export function egressRefusalOf(err: unknown): EgressRefusedError | undefined {
  for (let e: unknown = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof EgressRefusedError) return e;
  return undefined;
}

const defaultLookup: EgressLookup = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export class EgressGuard implements EgressPolicy {
  private readonly allow: EgressAllowlist;
  private readonly lookup: EgressLookup;
  private readonly declareLookupMs: number;
  /**
   * undici, its Agent and connectors, loaded on the first fetch: undici is ~740 KB of the local
   * agent's bundle, and most agents (a `health`, a `task list`) never reach out. Plain fallback:
   * none needed; the first fetch waits for the import once.
   */
  private wired: Promise<Wired> | undefined;

  /**
   * `fetch`, but every connection it opens passes the guard (redirects are followed through it
   * unless the caller says `redirect: 'manual'`). A refused connection rejects like fetch does,
   * `TypeError('fetch failed')`, with an {@link EgressRefusedError} as its cause
   * ({@link egressRefusalOf} finds it). Give it to whatever takes a `fetch` (AI SDK providers, MCP's
   * HTTP transport).
   */
  readonly fetch: typeof fetch;

  constructor(opts: EgressGuardOptions = {}) {
    this.allow = opts.allow instanceof EgressAllowlist ? opts.allow : new EgressAllowlist(opts.allow ?? []);
    this.lookup = opts.lookup ?? defaultLookup;
    this.declareLookupMs = opts.declareLookupMs ?? 5_000;
    this.fetch = (input, init) => this.guardedFetch(input, init);
  }

  /**
   * The declare-time check: undefined when the URL may be used, else one sentence saying why not
   * (not http(s), not a URL, or a host that is, or resolves to, an internal address — naming the
   * host, the address, and the `--allow-egress` entry that would allow it).
   *
   * A name that does not resolve now is not refused: it may exist by the time it is used, and the
   * connect-time check judges whatever it resolves to then.
   */
  async refusal(url: string, schemes?: Readonly<Record<string, number>>): Promise<string | undefined> {
    try {
      await this.check(url, schemes);
      return undefined;
    } catch (err) {
      if (err instanceof EgressRefusedError) return err.message;
      throw err;
    }
  }

  /**
   * The declare-time check as a parsed URL, or an {@link EgressRefusedError} (see {@link refusal}).
   * `schemes`: protocols allowed besides http(s) (a git-remote's `git:`), with their default ports.
   */
  async check(url: string, schemes: Readonly<Record<string, number>> = {}): Promise<URL> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new EgressRefusedError(
        `${JSON.stringify(url.slice(0, 200))} is not a valid absolute URL (write it as https://host/path)`,
        '',
      );
    }
    const host = bare(target.hostname);
    const scheme = target.protocol.replace(/:$/, '');
    const other = Object.hasOwn(schemes, scheme) ? schemes[scheme] : undefined;
    if (target.protocol !== 'http:' && target.protocol !== 'https:' && other === undefined)
      throw new EgressRefusedError(`${scheme} URLs are refused: only http and https URLs may be reached`, host);
    const port = Number(target.port) || other || (target.protocol === 'https:' ? 443 : 80);
    if (this.allow.allows(host, port)) return target;
    if (net.isIP(host)) {
      const what = refusedAddressClass(host);
      if (what) throw refused(host, port, host, what);
      return target;
    }
    const addresses = await this.resolveForDeclare(host);
    if (addresses === undefined) return target;
    const bad = firstRefused(addresses);
    if (bad) throw refused(host, port, bad.address, bad.what);
    return target;
  }

  /**
   * The connect-time check for a client that opens its own connection (git): the one address to
   * connect `host:port` to, judged now. Every address of a name is judged and the first is
   * returned, for the caller to pin (git's `http.curloptResolve`), so the name cannot answer
   * something else when the connection is made (DNS rebinding). An allowlisted host is not
   * judged; a name that does not resolve is an error saying so.
   */
  async addressFor(host: string, port: number): Promise<string> {
    const name = bare(host);
    if (net.isIP(name)) {
      const what = this.allow.allows(name, port) ? undefined : refusedAddressClass(name);
      if (what) throw refused(name, port, name, what);
      return name;
    }
    const addresses = await this.lookup(name).catch((err: unknown) => {
      throw Object.assign(new Error(`${name} does not resolve (${(err as Error).message})`), { code: 'ENOTFOUND' });
    });
    const bad = this.allow.allows(name, port) ? undefined : firstRefused(addresses);
    if (bad) throw refused(name, port, bad.address, bad.what);
    const first = addresses.find((a) => net.isIP(a) !== 0);
    if (first === undefined) throw Object.assign(new Error(`${name} has no usable address`), { code: 'ENOTFOUND' });
    return first;
  }

  /** Closes the guard's idle connections. */
  async close(): Promise<void> {
    if (this.wired) await (await this.wired).agent.close();
  }

  private wire(): Promise<Wired> {
    this.wired ??= import('undici').then((m) => {
      // undici is CommonJS: in the bundle its exports are only the namespace's default (esbuild's
      // split chunks); under Node's own loader they are named too.
      const u = typeof m.buildConnector === 'function' ? m : (m.default as unknown as typeof m);
      // Connects without judging the address (allowlisted hosts and public literals).
      const direct = u.buildConnector({});
      // Connects to what `netLookup` resolved and judged.
      const resolving = u.buildConnector({ lookup: (h, o, cb) => this.netLookup(h, o, cb) });
      return { fetch: u.fetch, agent: new u.Agent({ connect: (o, cb) => this.connect(direct, resolving, o, cb) }) };
    });
    return this.wired;
  }

  /** Every address of a name, or undefined when it does not resolve now (or not in time). */
  private async resolveForDeclare(host: string): Promise<readonly string[] | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.declareLookupMs);
    });
    try {
      return await Promise.race([this.lookup(host).catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async guardedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    // undici's own fetch does not take the global fetch's Request objects: pass what they hold.
    if (input instanceof Request) {
      const bodyless = input.method === 'GET' || input.method === 'HEAD';
      init = {
        method: input.method,
        headers: input.headers,
        redirect: input.redirect,
        signal: input.signal,
        ...(bodyless ? {} : { body: await input.arrayBuffer() }),
        ...init,
      };
      input = input.url;
    }
    const { fetch: undiciFetch, agent } = await this.wire();
    return undiciFetch(input, { ...(init as object), dispatcher: agent });
  }

  private connect(
    direct: buildConnector.connector,
    resolving: buildConnector.connector,
    opts: buildConnector.Options,
    cb: buildConnector.Callback,
  ): void {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    const host = bare(opts.hostname);
    if (this.allow.allows(host, port)) return direct(opts, cb);
    // A literal address is never looked up (net.connect skips the lookup hook for it): judged here.
    if (net.isIP(host)) {
      const what = refusedAddressClass(host);
      if (what) return cb(refused(host, port, host, what), null);
      return direct(opts, cb);
    }
    resolving(opts, (err, socket) => {
      // The lookup hook knows no port: the refusal is written again with the allowlist entry that would do.
      if (err instanceof LookupRefusal) cb(refused(host, port, err.address, err.what), null);
      else if (err) cb(err, null);
      else cb(null, socket);
    });
  }

  /** net.connect's lookup: every address of the name, refused as a whole when any is internal. */
  private netLookup(
    hostname: string,
    options: dns.LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
  ): void {
    this.lookup(hostname).then(
      (addresses) => {
        const bad = firstRefused(addresses);
        if (bad) return callback(new LookupRefusal(bad.address, bad.what), '');
        const want =
          options.family === 4 || options.family === 'IPv4'
            ? 4
            : options.family === 6 || options.family === 'IPv6'
              ? 6
              : 0;
        const list = addresses
          .map((address) => ({ address, family: net.isIP(address) }))
          .filter((a) => a.family !== 0 && (want === 0 || a.family === want));
        const first = list[0];
        if (!first)
          return callback(Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' }), '');
        if (options.all) callback(null, list);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  }
}

/** undici's fetch and the Agent whose connector is the guard's. */
interface Wired {
  fetch: typeof undiciFetchType;
  agent: Agent;
}

/** A refusal found by the lookup hook, before the connector adds the port. */
class LookupRefusal extends Error {
  readonly address: string;
  readonly what: string;

  constructor(address: string, what: string) {
    super(`${address} is ${what}`);
    this.address = address;
    this.what = what;
  }
}

function firstRefused(addresses: readonly string[]): { address: string; what: string } | undefined {
  for (const address of addresses) {
    const what = refusedAddressClass(address);
    if (what) return { address, what };
  }
  return undefined;
}

function refused(host: string, port: number, address: string, what: string): EgressRefusedError {
  const shown = net.isIPv6(host) ? `[${host}]` : host;
  const where = host === address ? `it is ${what}` : `it resolves to ${address}, ${what}`;
  return new EgressRefusedError(
    `egress to ${shown} is refused: ${where}; a server administrator may allow it with \`agents serve --allow-egress ${shown}:${port}\``,
    host,
  );
}

/** A URL's host name without the brackets of an IPv6 literal. */
function bare(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

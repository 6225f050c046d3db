/**
 * The hosts a server administrator lets outbound requests reach even though they are internal
 * (`agents serve --allow-egress HOST[:PORT]`): `HOST` alone allows every port of it. Host names
 * are matched as the URL parser writes them (lower case, IPv4 in dotted decimal, IPv6 compressed),
 * so an entry matches however a URL spells the same host.
 */
import net from 'node:net';

/** A malformed allowlist entry (the composition root turns it into a start-up error). */
export class EgressAllowlistError extends Error {
  override readonly name = 'EgressAllowlistError';
  readonly entry: string;
  readonly problem: string;

  constructor(entry: string, problem: string) {
    super(`the egress allowlist entry ${JSON.stringify(entry.slice(0, 200))} ${problem}`);
    this.entry = entry;
    this.problem = problem;
  }
}

export interface EgressAllowEntry {
  /** As the URL parser writes it, without brackets. */
  host: string;
  /** Absent: every port. */
  port?: number | undefined;
}

export class EgressAllowlist {
  private readonly entries: readonly EgressAllowEntry[];

  /** Parses every entry; throws {@link EgressAllowlistError} at the first malformed one. */
  constructor(entries: readonly string[] = []) {
    this.entries = entries.map(parseEgressAllowEntry);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Whether a URL's host (any spelling; brackets optional) and port are allowed. */
  allows(host: string, port: number): boolean {
    const h = normaliseHost(host);
    if (h === undefined) return false;
    return this.entries.some((e) => e.host === h && (e.port === undefined || e.port === port));
  }
}

/** One `HOST`, `HOST:PORT`, `[IPv6]`, `[IPv6]:PORT` or bare `IPv6` entry. */
export function parseEgressAllowEntry(text: string): EgressAllowEntry {
  const entry = text.trim();
  let host: string;
  let port: string | undefined;
  if (entry === '' || /[/@?#*\s]/.test(entry))
    throw new EgressAllowlistError(text, 'is not a host name or an IP address (wildcards and URLs are not accepted)');
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(entry);
  if (bracketed) {
    host = bracketed[1] ?? '';
    port = bracketed[2];
    if (!net.isIPv6(host))
      throw new EgressAllowlistError(text, 'has brackets around something that is not an IPv6 address');
  } else if ((entry.match(/:/g) ?? []).length > 1 && /^[0-9A-Fa-f:.]+$/.test(entry)) {
    // Several colons without brackets: an IPv6 address, never with a port (write [::1]:8080 for one).
    host = entry;
    if (!net.isIPv6(host))
      throw new EgressAllowlistError(
        text,
        'is not an IPv6 address (write [ADDRESS]:PORT for an IPv6 address and a port)',
      );
  } else {
    const colon = entry.indexOf(':');
    host = colon === -1 ? entry : entry.slice(0, colon);
    port = colon === -1 ? undefined : entry.slice(colon + 1);
    if (!/^[A-Za-z0-9._-]+$/.test(host))
      throw new EgressAllowlistError(text, 'is not a host name or an IP address (wildcards and URLs are not accepted)');
  }
  const normal = normaliseHost(host);
  if (normal === undefined) throw new EgressAllowlistError(text, 'is not a valid host name');
  if (port === undefined) return { host: normal };
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
    throw new EgressAllowlistError(text, 'has a port that is not a number from 1 to 65535');
  return { host: normal, port: Number(port) };
}

/** A host as the URL parser writes it (lower case, brackets removed), or undefined when it is not one. */
export function normaliseHost(host: string): string | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === '') return undefined;
  try {
    const h = new URL(`http://${net.isIPv6(bare) ? `[${bare}]` : bare}/`).hostname;
    return h.startsWith('[') ? h.slice(1, -1) : h;
  } catch {
    return undefined;
  }
}

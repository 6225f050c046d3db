/**
 * Which IP addresses a server must not reach on a member's behalf: loopback, private, link-local
 * (cloud metadata lives at 169.254.169.254), carrier-grade NAT, reserved and multicast ranges, and
 * the IPv6 forms that carry an IPv4 address inside them (mapped, compatible, NAT64, 6to4), judged
 * by the address they carry.
 *
 * Addresses are parsed to bytes and compared with prefixes: a text pattern misses equivalent
 * spellings (the URL parser turns `[::127.0.0.1]` into `[::7f00:1]`), bytes do not.
 */
import net from 'node:net';

type Range = readonly [prefix: readonly number[], bits: number, what: string];

/** IPv4 ranges, first match wins (the broadcast address before the rest of 240/4). */
const V4: readonly Range[] = [
  [[0, 0, 0, 0], 8, 'an address of "this network" (0.0.0.0/8)'],
  [[10, 0, 0, 0], 8, 'a private address'],
  [[100, 64, 0, 0], 10, 'a carrier-grade NAT address'],
  [[127, 0, 0, 0], 8, 'a loopback address'],
  [[169, 254, 0, 0], 16, 'a link-local address'],
  [[172, 16, 0, 0], 12, 'a private address'],
  [[192, 0, 0, 0], 24, 'an IETF protocol assignment address'],
  [[192, 168, 0, 0], 16, 'a private address'],
  [[198, 18, 0, 0], 15, 'a benchmarking address'],
  [[224, 0, 0, 0], 4, 'a multicast address'],
  [[255, 255, 255, 255], 32, 'the broadcast address'],
  [[240, 0, 0, 0], 4, 'a reserved address'],
];

/** IPv6 ranges refused whatever follows the prefix. `::` and `::1` come before the IPv4-compatible /96. */
const V6: readonly Range[] = [
  [[], 128, 'the unspecified address'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'a loopback address'],
  [[0xfc], 7, 'a unique-local (private) address'],
  [[0xfe, 0x80], 10, 'a link-local address'],
  [[0xfe, 0xc0], 10, 'a site-local address'],
  [[0xff], 8, 'a multicast address'],
  // Teredo tunnels to an IPv4 host through a relay; the client address is obfuscated, so it is
  // refused outright rather than judged.
  [[0x20, 0x01, 0, 0], 32, 'a Teredo tunnel address'],
];

/** IPv6 forms that reach an IPv4 host: the prefix, what the form is called, and the IPv4 address's first byte. */
const EMBEDDING: ReadonlyArray<readonly [prefix: readonly number[], bits: number, form: string, at: number]> = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 'an IPv4-mapped form', 12],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 96, 'an IPv4-compatible form', 12],
  [[0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96, 'a NAT64 form', 12],
  // The local-use NAT64 prefix (RFC 8215) as a /96 (64:ff9b:1::a.b.c.d). A network may also
  // subdivide the /48 at RFC 6052's other lengths, which put the IPv4 address elsewhere; such an
  // address cannot be judged without knowing the local layout and is refused below.
  [[0, 0x64, 0xff, 0x9b, 0, 1, 0, 0, 0, 0, 0, 0], 96, 'a local-use NAT64 form', 12],
  [[0x20, 0x02], 16, 'a 6to4 form', 2],
];

/** The rest of the local-use NAT64 /48: refused (see EMBEDDING). */
const LOCAL_NAT64: Range = [
  [0, 0x64, 0xff, 0x9b, 0, 1],
  48,
  'a local-use NAT64 address not in the 64:ff9b:1::/96 layout',
];

/**
 * The bytes of an IP address (4 for IPv4, 16 for IPv6), or undefined when the text is not one.
 * Brackets and an IPv6 zone (`%eth0`) are ignored. IPv4 must be dotted decimal as DNS and the URL
 * parser write it (other spellings are host names, and their resolution is checked instead).
 */
export function ipBytes(text: string): Uint8Array | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  const family = net.isIP(s);
  if (family === 4) return Uint8Array.from(s.split('.').map(Number));
  if (family !== 6) return undefined;
  const bytes = new Uint8Array(16);
  let tail = s;
  // An embedded dotted quad (::ffff:1.2.3.4) fills the last four bytes.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  let groupsEnd = 16;
  if (quad?.[1]) {
    bytes.set(quad[1].split('.').map(Number), 12);
    tail = s.slice(0, -quad[1].length);
    if (tail.endsWith(':') && !tail.endsWith('::')) tail = tail.slice(0, -1);
    groupsEnd = 12;
  }
  const [head = '', rest] = tail.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = groups(head);
  const back = rest === undefined ? [] : groups(rest);
  front.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 255;
  });
  const backStart = groupsEnd - 2 * back.length;
  back.forEach((g, i) => {
    bytes[backStart + 2 * i] = g >> 8;
    bytes[backStart + 2 * i + 1] = g & 255;
  });
  return bytes;
}

/**
 * Why an address may not be reached — e.g. `a loopback address`, `a NAT64 form of 127.0.0.1, a
 * loopback address` — or undefined when it may (a public address). Text that is not an IP address
 * is refused: nothing should be connected to that cannot be judged.
 */
export function refusedAddressClass(address: string): string | undefined {
  const bytes = ipBytes(address);
  if (!bytes) return 'not an IP address';
  return bytes.length === 4 ? v4Class(bytes) : v6Class(bytes);
}

/** True when the address may not be reached (see {@link refusedAddressClass}). */
export function isRefusedAddress(address: string): boolean {
  return refusedAddressClass(address) !== undefined;
}

function v4Class(bytes: Uint8Array): string | undefined {
  return V4.find(([prefix, bits]) => matches(bytes, prefix, bits))?.[2];
}

function v6Class(bytes: Uint8Array): string | undefined {
  const direct = V6.find(([prefix, bits]) => matches(bytes, prefix, bits));
  if (direct) return direct[2];
  for (const [prefix, bits, form, at] of EMBEDDING) {
    if (!matches(bytes, prefix, bits)) continue;
    const v4 = bytes.slice(at, at + 4);
    const why = v4Class(v4);
    return why && `${form} of ${v4.join('.')}, ${why}`;
  }
  return matches(bytes, LOCAL_NAT64[0], LOCAL_NAT64[1]) ? LOCAL_NAT64[2] : undefined;
}

/** Whether the first `bits` bits of `bytes` equal the prefix's (missing prefix bytes are 0). */
function matches(bytes: Uint8Array, prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const take = Math.min(8, bits - i * 8);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { KeyHasher } from '../../application/index.ts';

const KEY_LENGTH = 32;

function derive(secret: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_LENGTH, { ...opts, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export interface ScryptKeyHasherOptions {
  /** CPU/memory cost, a power of two (default 2^14). */
  N?: number;
  r?: number;
  p?: number;
}

/**
 * API key secrets hashed with scrypt (N=2^14, r=8, p=1 by default) and a random 16-byte salt,
 * stored as `scrypt$N$r$p$salt$hash` (base64url). Verification reads the parameters from the
 * stored value, so raising the cost later keeps old keys working; it compares in constant time.
 */
export class ScryptKeyHasher implements KeyHasher {
  private readonly N: number;
  private readonly r: number;
  private readonly p: number;

  constructor(opts: ScryptKeyHasherOptions = {}) {
    this.N = opts.N ?? 2 ** 14;
    this.r = opts.r ?? 8;
    this.p = opts.p ?? 1;
  }

  async hash(secret: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await derive(secret, salt, { N: this.N, r: this.r, p: this.p });
    return ['scrypt', this.N, this.r, this.p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  async verify(secret: string, stored: string): Promise<boolean> {
    const parts = stored.split('$');
    if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
    const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
    if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return false;
    const salt = Buffer.from(parts[4] ?? '', 'base64url');
    const expected = Buffer.from(parts[5] ?? '', 'base64url');
    if (salt.length === 0 || expected.length !== KEY_LENGTH) return false;
    const key = await derive(secret, salt, { N, r, p });
    return timingSafeEqual(key, expected);
  }
}

/** Fakes for the accounts' ports: a key hasher that counts the slow verifications (scrypt, kept cheap). */
import type { KeyHasher } from '../../../src/application/index.ts';
import { ScryptKeyHasher } from '../../../src/infrastructure/index.ts';

/** The real scrypt hasher at a low cost, counting each verification (what a throttle must spare). */
export class CountingHasher implements KeyHasher {
  verifies = 0;
  private readonly inner = new ScryptKeyHasher({ N: 2 ** 10 });
  hash(s: string): Promise<string> {
    return this.inner.hash(s);
  }
  verify(s: string, stored: string): Promise<boolean> {
    this.verifies++;
    return this.inner.verify(s, stored);
  }
}

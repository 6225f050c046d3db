import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScryptKeyHasher } from '../../../../src/infrastructure/index.ts';

describe('ScryptKeyHasher', () => {
  const hasher = new ScryptKeyHasher();

  it('stores scrypt$N$r$p$salt$hash with the default cost, a fresh salt each time', async () => {
    const a = await hasher.hash('secret-one');
    const b = await hasher.hash('secret-one');
    assert.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, b, 'a random salt');
  });

  it('verifies the secret it hashed, and nothing else', async () => {
    const stored = await hasher.hash('secret-one');
    assert.equal(await hasher.verify('secret-one', stored), true);
    assert.equal(await hasher.verify('secret-two', stored), false);
    assert.equal(await hasher.verify('', stored), false);
  });

  it('reads the cost from the stored value (a cheaper hash still verifies)', async () => {
    const cheap = await new ScryptKeyHasher({ N: 2 ** 10 }).hash('s');
    assert.match(cheap, /^scrypt\$1024\$/);
    assert.equal(await hasher.verify('s', cheap), true);
  });

  it('refuses malformed or outrageous stored values without throwing', async () => {
    for (const bad of [
      '',
      'plain',
      'scrypt$1$2$3',
      'bcrypt$16384$8$1$AAAA$BBBB',
      'scrypt$99999999$8$1$AAAA$' + 'A'.repeat(43),
    ])
      assert.equal(await hasher.verify('s', bad), false, bad);
  });
});

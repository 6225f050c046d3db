/** The secret cipher and its key file: AES-256-GCM bound to `namespace/name`, a 0600 key made once. */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SecretUnreadable, silentLogger } from '../../../../src/application/index.ts';
import {
  AesGcmSecretCipher,
  readOrCreateSecretKeyFile,
  readSecretKeyFile,
  SecretKeyFileError,
} from '../../../../src/infrastructure/index.ts';

const unreadable = (why: SecretUnreadable['why']) => (err: unknown) =>
  err instanceof SecretUnreadable && err.why === why;

describe('AesGcmSecretCipher', () => {
  let dir: string;
  let n = 0;
  const keyPath = (): string => join(dir, `k${++n}`, 'secret.key');
  const cipherAt = (keyFile: string, showPath = true) =>
    new AesGcmSecretCipher({ keyFile, showPath, logger: silentLogger });
  const fresh = () => {
    const p = keyPath();
    mkdirSync(join(p, '..'));
    return cipherAt(p);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ca-cipher-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('seals and opens a value under its binding; each seal has a fresh IV', async () => {
    const c = fresh();
    const a = await c.seal('sk-live-0123 ✓', 'team/openai');
    const b = await c.seal('sk-live-0123 ✓', 'team/openai');
    assert.match(a, /^v1:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/]{22}==:[A-Za-z0-9+/=]+$/);
    assert.notEqual(a, b, 'two seals of one value differ');
    assert.notEqual(a.split(':')[1], b.split(':')[1], 'the IVs differ');
    assert.ok(!a.includes('sk-live'));
    assert.equal(await c.open(a, 'team/openai'), 'sk-live-0123 ✓');
    assert.equal(await c.open(b, 'team/openai'), 'sk-live-0123 ✓');
  });

  it('does not open a ciphertext under another binding (a row moved to another name or namespace)', async () => {
    const c = fresh();
    const sealed = await c.seal('v', 'team/openai');
    await assert.rejects(c.open(sealed, 'team/other'), unreadable('authentication'));
    await assert.rejects(c.open(sealed, 'bob/openai'), unreadable('authentication'));
  });

  it('refuses a tampered text: IV, tag, ciphertext or version changed, or parts missing', async () => {
    const c = fresh();
    const sealed = await c.seal('a value long enough to flip a byte in', 'ns/name');
    const [v, iv, tag, ct] = sealed.split(':') as [string, string, string, string];
    const flip = (b64: string): string => {
      const buf = Buffer.from(b64, 'base64');
      buf[0] = (buf[0] ?? 0) ^ 1;
      return buf.toString('base64');
    };
    for (const text of [
      [v, flip(iv), tag, ct].join(':'),
      [v, iv, flip(tag), ct].join(':'),
      [v, iv, tag, flip(ct)].join(':'),
    ])
      await assert.rejects(c.open(text, 'ns/name'), unreadable('authentication'));
    for (const text of [
      ['v2', iv, tag, ct].join(':'),
      [v, iv, tag].join(':'),
      [v, iv, tag, ct, ct].join(':'),
      [v, iv.slice(4), tag, ct].join(':'),
      [v, iv, tag.slice(4), ct].join(':'),
      [v, '!!!!', tag, ct].join(':'),
      'plain text',
    ])
      await assert.rejects(c.open(text, 'ns/name'), unreadable('format'));
  });

  it('does not open what another key sealed', async () => {
    const sealed = await fresh().seal('v', 'ns/name');
    const other = fresh();
    await other.seal('w', 'ns/name'); // makes its key
    await assert.rejects(other.open(sealed, 'ns/name'), unreadable('authentication'));
  });

  it('opening with no key file says so and makes none', async () => {
    const p = keyPath();
    mkdirSync(join(p, '..'));
    const c = cipherAt(p);
    await assert.rejects(c.open(`v1:${'A'.repeat(16)}:${'A'.repeat(22)}==:AAAA`, 'ns/x'), unreadable('no-key'));
    assert.equal(await readSecretKeyFile(p), undefined);
  });

  it('makes the key file on first seal: mode 0600 whatever the umask, 32 bytes in base64 on one line', async () => {
    const p = keyPath();
    mkdirSync(join(p, '..'));
    const old = process.umask(0);
    try {
      await cipherAt(p).seal('v', 'ns/x');
    } finally {
      process.umask(old);
    }
    assert.equal(statSync(p).mode & 0o777, 0o600);
    const text = readFileSync(p, 'utf8');
    assert.match(text, /^[A-Za-z0-9+/]{43}=\n$/);
    assert.equal(Buffer.from(text.trim(), 'base64').length, 32);
  });

  it('several processes making the key at once end up with one key', async () => {
    const p = keyPath();
    mkdirSync(join(p, '..'));
    const keys = await Promise.all(Array.from({ length: 8 }, () => readOrCreateSecretKeyFile(p)));
    const file = readFileSync(p, 'utf8').trim();
    for (const k of keys) assert.equal(k.toString('base64'), file);
    // No temporary file is left behind.
    assert.deepEqual(readdirSync(join(p, '..')), ['secret.key']);
  });

  it('a key file others may read or write is refused, naming its mode and the fix; nothing is made instead', async () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602]) {
      const p = keyPath();
      mkdirSync(join(p, '..'));
      const c = cipherAt(p);
      await c.seal('v', 'ns/x');
      chmodSync(p, mode);
      const before = readFileSync(p, 'utf8');
      await assert.rejects(readSecretKeyFile(p), (err) => {
        assert.ok(err instanceof SecretKeyFileError);
        assert.equal(
          err.message,
          `the secret key file ${p} may be read or written by group or others (mode ${mode.toString(8)})`,
        );
        assert.equal(err.hint, `run chmod 600 ${p}`);
        return true;
      });
      await assert.rejects(cipherAt(p).ready({ create: false }), SecretKeyFileError);
      // At first use (a cipher that has not read it yet): a clear error, to the local user with the path.
      await assert.rejects(cipherAt(p).seal('w', 'ns/x'), (err: Error & { reason?: string; hint?: string }) => {
        assert.equal(err.reason, 'UNAVAILABLE');
        assert.equal(
          err.message,
          `Secrets cannot be used: the secret key file ${p} may be read or written by group or others (mode ${mode.toString(8)})`,
        );
        assert.equal(err.hint, `run chmod 600 ${p}`);
        return true;
      });
      // A server's users are not told its paths.
      await assert.rejects(cipherAt(p, false).seal('w', 'ns/x'), (err: Error & { hint?: string }) => {
        assert.equal(
          err.message,
          "Secrets cannot be used: the server's secret key file is unusable (its log says why)",
        );
        assert.ok(!err.message.includes(p) && !(err.hint ?? '').includes(p));
        return true;
      });
      assert.equal(readFileSync(p, 'utf8'), before, 'the file is left as it was');
    }
  });

  it('a malformed key file is refused, never replaced', async () => {
    for (const content of ['', 'not base64 at all\n', `${Buffer.alloc(16).toString('base64')}\n`, 'x'.repeat(5000)]) {
      const p = keyPath();
      mkdirSync(join(p, '..'));
      writeFileSync(p, content, { mode: 0o600 });
      await assert.rejects(readOrCreateSecretKeyFile(p), (err) => {
        assert.ok(err instanceof SecretKeyFileError);
        assert.match(err.message, /is not a key: it must hold 32 random bytes in base64 on one line/);
        return true;
      });
      assert.equal(readFileSync(p, 'utf8'), content);
    }
    const d = keyPath();
    mkdirSync(d, { recursive: true });
    await assert.rejects(readSecretKeyFile(d), /is not a regular file/);
  });

  it('a key written by hand (openssl rand -base64 32) is read', async () => {
    const p = keyPath();
    mkdirSync(join(p, '..'));
    const key = Buffer.alloc(32, 7);
    writeFileSync(p, `  ${key.toString('base64')}\n\n`, { mode: 0o400 });
    assert.deepEqual(await readSecretKeyFile(p), key);
    const c = cipherAt(p);
    assert.equal(await c.open(await c.seal('v', 'a/b'), 'a/b'), 'v');
  });

  it('a key file that cannot be made (no such directory) is a clear error', async () => {
    const p = join(dir, 'missing-dir', 'secret.key');
    await assert.rejects(readOrCreateSecretKeyFile(p), (err) => {
      assert.ok(err instanceof SecretKeyFileError);
      assert.equal(err.message, `the secret key file ${p} cannot be created (ENOENT)`);
      assert.match(err.hint, /exists and is writable by the server, or make the key yourself/);
      return true;
    });
  });
});

/** The sync connection store: remote.json (private, atomic, a broken one refused clearly). */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import { FileRemoteConnectionStore } from '../../../../src/infrastructure/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'sync-stores-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('FileRemoteConnectionStore', () => {
  it('stores the connection readable by its owner only, without leaving temporary files, and clears it', async () => {
    const store = new FileRemoteConnectionStore(join(dir, 'data'));
    assert.equal(await store.get(), undefined);
    const c = { url: 'http://s', token: 'secret', user: 'alice', autoPullSeconds: 300, paths: { 'team/r': '/x' } };
    await store.set(c);
    assert.deepEqual(await store.get(), c);
    assert.equal(statSync(store.file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(join(dir, 'data')), ['remote.json']);
    assert.equal(await store.clear(), true);
    assert.equal(await store.get(), undefined);
    assert.equal(await store.clear(), false);
  });

  it('a broken remote.json is refused with how to fix it', async () => {
    const store = new FileRemoteConnectionStore(dir);
    writeFileSync(store.file, '{"url": 1}');
    await assert.rejects(
      () => store.get(),
      (e: AppError) => e.reason === 'INVALID_STATE' && /agents server disconnect/.test(e.hint ?? ''),
    );
  });
});

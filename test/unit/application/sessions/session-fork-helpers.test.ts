import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forkTitle, remapIds } from '../../../../src/application/sessions/session-fork.ts';

describe('fork helpers', () => {
  it('remapIds replaces whole strings that are old ids, deep, and copies', () => {
    const ids = new Map([
      ['t1', 'n1'],
      ['s1', 'f1'],
    ]);
    const value = { id: 't1', contextId: 's1', covers: ['t1', 'other'], text: 'about t1', n: 3, none: null };
    const out = remapIds(value, ids);
    assert.deepEqual(out, { id: 'n1', contextId: 'f1', covers: ['n1', 'other'], text: 'about t1', n: 3, none: null });
    assert.deepEqual(value.covers, ['t1', 'other'], 'the original is not changed');
  });

  it('forkTitle: the one asked, else the original marked, within 200 characters', () => {
    assert.equal(forkTitle('Mine', 'Theirs'), 'Mine');
    assert.equal(forkTitle(undefined, 'Theirs'), 'Theirs (fork)');
    assert.equal(forkTitle(undefined, undefined), undefined);
    const long = forkTitle(undefined, 'x'.repeat(200));
    assert.equal(long?.length, 200);
    assert.ok(long?.endsWith(' (fork)'));
  });
});

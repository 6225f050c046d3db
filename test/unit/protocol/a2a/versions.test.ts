import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseVersion } from '../../../../src/protocol/a2a/versions.ts';

describe('versions', () => {
  it('negotiates Major.Minor and refuses the rest', () => {
    assert.equal(parseVersion('1.0'), '1.0');
    assert.equal(parseVersion('1.0.3'), '1.0');
    assert.equal(parseVersion(' 0.3 '), '0.3');
    assert.equal(parseVersion(''), undefined);
    assert.equal(parseVersion(undefined), undefined);
    assert.throws(() => parseVersion('2.0'), /not supported/);
    assert.throws(() => parseVersion('banana'), /not supported/);
  });
});

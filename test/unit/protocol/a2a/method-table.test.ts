import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONTRACTS } from '../../../../src/protocol/a2a/contracts/index.js';
import { METHODS } from '../../../../src/protocol/a2a/method-table.js';

describe('method table and contracts', () => {
  it('binds every contract exactly once, and nothing that is not a contract', () => {
    assert.equal(METHODS.length, CONTRACTS.length);
    METHODS.forEach((m, i) => {
      const c = CONTRACTS[i];
      assert.ok(c, `contract ${i}`);
      const { call, ...contract } = m;
      assert.equal(typeof call, 'function', m.name);
      assert.deepEqual(contract, c, `${m.name} is its contract plus a call`);
    });
  });
});

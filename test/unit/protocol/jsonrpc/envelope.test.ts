import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkEnvelope } from '../../../../src/protocol/jsonrpc/envelope.ts';

describe('envelope', () => {
  it('accepts a well-formed request and flags each malformation', () => {
    assert.ok(checkEnvelope({ jsonrpc: '2.0', id: 1, method: 'X' }).ok);
    assert.ok(checkEnvelope({ jsonrpc: '2.0', method: 'X' }).ok, 'a notification');
    for (const bad of [
      null,
      1,
      'x',
      [],
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: 1, method: '' },
      { jsonrpc: '2.0', id: true, method: 'X' },
      { jsonrpc: '2.0', id: 1, method: 'X', params: 3 },
    ]) {
      assert.equal(checkEnvelope(bad).ok, false, JSON.stringify(bad));
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeVersionRefusal } from '../../../src/main/node-version.ts';

describe('nodeVersionRefusal', () => {
  it('names the Node needed and the one found, in one line, below 22.12', () => {
    assert.equal(
      nodeVersionRefusal('20.20.2'),
      'agents: needs Node.js 22.12 or newer (24 recommended); this is v20.20.2 — see README "Requirements"',
    );
    assert.match(nodeVersionRefusal('22.11.0') ?? '', /this is v22\.11\.0/);
    assert.match(nodeVersionRefusal('18.0.0') ?? '', /^agents: needs Node\.js 22\.12/);
  });

  it('lets 22.12 and newer through, and a version it cannot read', () => {
    for (const v of ['22.12.0', '22.20.1', '23.0.0', '24.21.0', '26.1.0', 'weird'])
      assert.equal(nodeVersionRefusal(v), undefined, v);
  });
});

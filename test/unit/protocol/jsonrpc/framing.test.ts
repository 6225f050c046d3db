import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLineFramer } from '../../../../src/protocol/jsonrpc/framing.ts';

describe('line framing', () => {
  it('splits lines across chunks and reports oversized ones without losing the next', () => {
    const lines: string[] = [];
    const over: number[] = [];
    const f = createLineFramer(
      (l) => lines.push(l),
      (n) => over.push(n),
      10,
    );
    f.push(Buffer.from('{"a":1}\n{"b"'));
    f.push(Buffer.from(':2}\r\n'));
    f.push(Buffer.from('xxxxxxxxxxxxxxxxxxxx'));
    f.push(Buffer.from('yyy\n{"c":3}\n'));
    f.push(Buffer.from('{"d":4}'));
    f.flush();
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}']);
    assert.equal(over.length, 1);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copyJson } from '../../../src/domain/json.ts';

describe('copyJson', () => {
  it('copies nested objects and arrays, sharing nothing with the original', () => {
    const original = { a: [1, { b: 'x' }], c: { d: null, e: true } };
    const copy = copyJson(original);
    assert.deepEqual(copy, original);
    assert.notEqual(copy.a, original.a);
    assert.notEqual(copy.a[1], original.a[1]);
    assert.notEqual(copy.c, original.c);
  });

  it('copies what JSON.stringify would write: a Date as its ISO string', () => {
    const at = new Date('2026-12-03T10:00:00.000Z');
    const value = { at, list: [at], nested: { at } };
    const copy = copyJson(value) as unknown;
    assert.deepEqual(copy, {
      at: '2026-12-03T10:00:00.000Z',
      list: ['2026-12-03T10:00:00.000Z'],
      nested: { at: '2026-12-03T10:00:00.000Z' },
    });
    assert.equal(JSON.stringify(copy), JSON.stringify(value));
  });

  it('asks a toJSON once, as JSON.stringify does, even when it returns its own object', () => {
    const self = {
      toJSON(): unknown {
        return this;
      },
      x: 1,
    };
    const copy = copyJson(self) as Record<string, unknown>;
    assert.equal(copy['x'], 1);
    assert.notEqual(copy, self);
  });

  it('keeps a "__proto__" key as data, never as the copy\'s prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as Record<string, unknown>;
    const copy = copyJson(parsed);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.equal((copy as { polluted?: unknown }).polluted, undefined);
    assert.deepEqual(Object.keys(copy), ['__proto__', 'x']);
    assert.equal(JSON.stringify(copy), '{"__proto__":{"polluted":true},"x":1}');
  });
});

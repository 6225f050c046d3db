/** The payload limits (src/domain/limits.ts): exact at the boundary, safe on any shape. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/domain/errors.ts';
import { checkMessageLimits, DEFAULT_LIMITS, jsonBytes, jsonDepthExceeds } from '../../../src/domain/limits.ts';

const deep = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n));
const limitOf = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    assert.ok(err instanceof AppError && err.reason === 'INVALID_PARAMS');
    return err.details['limit'] as string;
  }
};

describe('payload limits', () => {
  it('measures depth exactly, with objects and arrays, and scalars as depth 0', () => {
    assert.equal(jsonDepthExceeds(deep(64), 64), false);
    assert.equal(jsonDepthExceeds(deep(65), 64), true);
    assert.equal(jsonDepthExceeds({ a: { b: [1, { c: 2 }] } }, 4), false);
    assert.equal(jsonDepthExceeds({ a: { b: [1, { c: {} }] } }, 4), true);
    assert.equal(jsonDepthExceeds('x', 0), false);
    assert.equal(jsonDepthExceeds(null, 0), false);
  });

  it('walks a million levels without overflowing the stack', () => {
    assert.equal(jsonDepthExceeds(deep(1_000_000), 64), true);
    assert.ok(jsonBytes(deep(100_000)) > 0);
  });

  it('counts bytes as UTF-8', () => {
    assert.equal(jsonBytes('é'), 4);
    assert.equal(jsonBytes(['a', 1]), 2 + 2 + 3 + 1);
  });

  it('names the limit a message passes', () => {
    const limits = { ...DEFAULT_LIMITS, maxParts: 2, maxPartBytes: 10, maxMessageBytes: 15, maxMetadataKeys: 1 };
    const m = (parts: unknown[], metadata?: Record<string, unknown>) => ({ parts: parts as never[], metadata });
    assert.equal(
      limitOf(() => checkMessageLimits(m([{ text: 'a' }, { text: 'b' }]), undefined, limits)),
      undefined,
    );
    assert.equal(
      limitOf(() => checkMessageLimits(m([{ text: 'a' }, { text: 'b' }, { text: 'c' }]), undefined, limits)),
      'maxParts',
    );
    assert.equal(
      limitOf(() => checkMessageLimits(m([{ text: 'x'.repeat(11) }]), undefined, limits)),
      'maxPartBytes',
    );
    assert.equal(
      limitOf(() => checkMessageLimits(m([{ text: 'x'.repeat(9) }, { text: 'y'.repeat(9) }]), undefined, limits)),
      'maxMessageBytes',
    );
    assert.equal(
      limitOf(() => checkMessageLimits(m([{ text: 'a' }], { a: 1, b: 2 }), undefined, limits)),
      'maxMetadataKeys',
    );
    assert.equal(
      limitOf(() => checkMessageLimits(m([{ text: 'a' }]), { a: 1, b: 2 }, limits)),
      'maxMetadataKeys',
    );
    assert.equal(
      limitOf(() => checkMessageLimits(m([{ text: 'a', metadata: { a: 1, b: 2 } }]), undefined, limits)),
      'maxMetadataKeys',
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkText } from '../../../../src/application/actors/echo.actor.ts';

describe('chunkText', () => {
  it('splits on word boundaries and loses nothing', () => {
    const text = 'the quick brown fox jumps over the lazy dog';
    const chunks = chunkText(text, 4);
    assert.ok(chunks.length >= 3 && chunks.length <= 5);
    assert.equal(chunks.join(''), text);
    assert.deepEqual(chunkText('', 4), ['']);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GptTokenCounter } from '../../../../src/infrastructure/index.ts';

describe('GptTokenCounter (o200k_base)', () => {
  const counter = new GptTokenCounter();

  it('counts as o200k does', async () => {
    assert.equal(await counter.count('hello world'), 2);
    assert.equal(await counter.count(''), 0);
    assert.ok((await counter.count('The quick brown fox jumps over the lazy dog. '.repeat(100))) > 900);
  });

  it('counts special-token text as text instead of refusing it', async () => {
    assert.ok((await counter.count('a <|endoftext|> b')) > 3);
  });

  it('answers concurrent first calls from one load', async () => {
    const fresh = new GptTokenCounter();
    assert.deepEqual(await Promise.all([fresh.count('hello world'), fresh.count('hello')]), [2, 1]);
  });
});

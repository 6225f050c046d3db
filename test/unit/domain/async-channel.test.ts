import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Channel } from '../../../src/domain/async-channel.ts';

describe('Channel', () => {
  it('delivers pushed values in order, then ends, and runs its cleanup once', async () => {
    let cleaned = 0;
    const ch = new Channel<number>(() => cleaned++);
    ch.push(1);
    ch.push(2);
    setTimeout(() => {
      ch.push(3);
      ch.end();
      ch.end();
    }, 5);
    const got: number[] = [];
    for await (const v of ch) got.push(v);
    assert.deepEqual(got, [1, 2, 3]);
    assert.equal(cleaned, 1);
  });
  it('raises a failure after the buffered values', async () => {
    const ch = new Channel<number>();
    ch.push(1);
    ch.fail(new Error('boom'));
    const got: number[] = [];
    await assert.rejects(async () => {
      for await (const v of ch) got.push(v);
    }, /boom/);
    assert.deepEqual(got, [1]);
  });
  it('raises a failure to a consumer already waiting', async () => {
    const ch = new Channel<number>();
    const pending = ch.next();
    ch.fail(new Error('late boom'));
    await assert.rejects(pending, /late boom/);
    assert.deepEqual(await ch.next(), { value: undefined, done: true });
  });
  it('runs the cleanup when the consumer leaves early', async () => {
    let cleaned = false;
    const ch = new Channel<number>(() => (cleaned = true));
    ch.push(1);
    ch.push(2);
    for await (const v of ch) if (v === 1) break;
    assert.ok(cleaned);
  });
});

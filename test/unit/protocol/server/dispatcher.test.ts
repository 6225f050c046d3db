import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { buildMethodTable, METHODS } from '../../../../src/protocol/a2a/method-table.js';
import { defineStreamContract } from '../../../../src/protocol/a2a/contract.js';
import { bindStream } from '../../../../src/protocol/a2a/method.js';
import { Dispatcher, type DispatcherOptions } from '../../../../src/protocol/server/dispatcher.js';

/** Only the table is read by isStreamingRequest; the rest of the options are never touched. */
const dispatcherFor = (table: DispatcherOptions['table']): Dispatcher =>
  new Dispatcher({ table, facade: {}, card: {}, logger: {} } as unknown as DispatcherOptions);

describe('Dispatcher.isStreamingRequest', () => {
  const table = buildMethodTable();
  const d = dispatcherFor(table);

  it('says a request streams exactly when its row is a stream, by every name of every version', () => {
    const streams = METHODS.filter((m) => m.kind === 'stream');
    assert.ok(streams.length >= 2, 'the table has streaming rows');
    for (const [name, m] of table.v1)
      assert.equal(d.isStreamingRequest({ method: name }, '1.0'), m.kind === 'stream', name);
    for (const [name, m] of table.v03)
      assert.equal(d.isStreamingRequest({ method: name }, '0.3'), m.kind === 'stream', name);
    assert.equal(
      d.isStreamingRequest({ method: 'tasks/resubscribe' }, undefined),
      true,
      'a v0.3 name without a version reads as 0.3',
    );
  });

  it('follows a new streaming row without any list elsewhere', () => {
    const watch = bindStream(
      defineStreamContract({
        name: '_cleveragents/x/watch',
        surface: 'extension',
        summary: '',
        permission: 'system:read',
        params: z.object({}),
        result: z.object({}),
      }),
      () => Promise.resolve((async function* () {})()),
    );
    const extended = dispatcherFor(buildMethodTable([...METHODS, watch]));
    assert.equal(extended.isStreamingRequest({ method: '_cleveragents/x/watch' }, '1.0'), true);
    assert.equal(d.isStreamingRequest({ method: '_cleveragents/x/watch' }, '1.0'), false);
  });

  it('is false for what is not a request for a known method', () => {
    for (const msg of [null, 42, [], {}, { method: 7 }, { method: 'NoSuchMethod' }])
      assert.equal(d.isStreamingRequest(msg, '1.0'), false, JSON.stringify(msg));
  });
});

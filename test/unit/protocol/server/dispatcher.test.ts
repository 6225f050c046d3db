import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { buildMethodTable, METHODS } from '../../../../src/protocol/a2a/method-table.ts';
import { defineStreamContract } from '../../../../src/protocol/a2a/contract.ts';
import { bindStream } from '../../../../src/protocol/a2a/method.ts';
import { resultText, type JsonRpcErrorObject } from '../../../../src/protocol/jsonrpc/envelope.ts';
import { JsonText } from '../../../../src/domain/json.ts';
import { LOCAL_PRINCIPAL, silentLogger } from '../../../../src/application/index.ts';
import { Dispatcher, type DispatcherOptions, type ReadMessage } from '../../../../src/protocol/server/dispatcher.ts';
import type { StreamEvent } from '../../../../src/protocol/server/dispatch-responses.ts';

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

describe('Dispatcher.read', () => {
  const d = dispatcherFor(buildMethodTable());
  /** The error answer of a refused read. */
  const refused = (r: ReadMessage): JsonRpcErrorObject & { id: unknown } => {
    assert.equal(r.ok, false, 'refused');
    if (r.ok || !('error' in r.response)) throw new Error('not an error answer');
    return { ...r.response.error, id: r.response.id };
  };

  it('parses one request and hands it on as it was', () => {
    const r = d.read('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}', 'a2a-v1');
    assert.deepEqual(r, { ok: true, message: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' } } });
  });

  it('answers text that is not JSON with -32700, in the caller’s error format', () => {
    for (const surface of ['a2a-v1', 'extension'] as const) {
      const e = refused(d.read('{"jsonrpc": "2.0", "id": 1,', surface));
      assert.equal(e.id, null);
      assert.equal(e.code, -32700);
      if (surface === 'a2a-v1') assert.ok(Array.isArray(e.data), 'v1.0 details are a list');
      else assert.equal((e.data as { reason?: string }).reason, 'PARSE_ERROR');
    }
  });

  it('refuses a batch (an array) with -32600, whatever it holds', () => {
    for (const text of ['[]', '[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]']) {
      const e = refused(d.read(text, 'extension'));
      assert.equal(e.code, -32600, text);
      assert.match(e.message, /batch requests are not supported/);
    }
  });
});

describe('Dispatcher streams', () => {
  const status = { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } };
  const json = JSON.stringify({ statusUpdate: status });
  const facade = {
    tasks: {
      stream: () =>
        Promise.resolve(
          (async function* () {
            yield { seq: 1, payload: { statusUpdate: status }, json };
            yield { seq: 2, payload: { statusUpdate: status } };
          })(),
        ),
    },
  };
  const d = new Dispatcher({
    table: buildMethodTable(),
    facade,
    card: {},
    logger: silentLogger,
  } as unknown as DispatcherOptions);
  const events = async (message: unknown, version: '1.0' | '0.3') => {
    const out = await d.dispatch(message, {
      principal: LOCAL_PRINCIPAL,
      version,
      signal: new AbortController().signal,
    });
    assert.equal(out.kind, 'stream', JSON.stringify(out));
    const got: StreamEvent[] = [];
    if (out.kind === 'stream') for await (const ev of out.events) got.push(ev);
    return got;
  };

  it('hands on an item’s JSON as the result’s when the result is the item itself (v1.0)', async () => {
    const message = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] };
    const got = await events({ jsonrpc: '2.0', id: 7, method: 'SendStreamingMessage', params: { message } }, '1.0');
    assert.equal(got.length, 2);
    assert.equal(got[0]?.resultJson, json);
    assert.deepEqual(JSON.parse(got[0]?.resultJson ?? ''), (got[0]?.response as { result?: unknown }).result);
    assert.equal(got[1]?.resultJson, undefined, 'an item without JSON gets none');
  });

  it('drops it when a codec re-encodes the result (v0.3)', async () => {
    const message = { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] };
    const got = await events({ jsonrpc: '2.0', id: 7, method: 'message/stream', params: { message } }, '0.3');
    assert.equal(got.length, 2);
    for (const ev of got) {
      assert.equal(ev.resultJson, undefined);
      assert.equal((ev.response as { result?: { kind?: string } }).result?.kind, 'status-update', 'the 0.3 form');
    }
  });
});

describe('Dispatcher results given as JSON text', () => {
  const task = {
    id: 't1',
    contextId: 'c1',
    status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-03-01T10:00:00.000Z' },
    history: [{ messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }],
  };
  const text = JSON.stringify(task);
  const dispatcher = (validateResults: boolean) =>
    new Dispatcher({
      table: buildMethodTable(),
      facade: { tasks: { getForClient: () => Promise.resolve(new JsonText(text)) } },
      card: {},
      logger: silentLogger,
      validateResults,
    } as unknown as DispatcherOptions);
  const call = (d: Dispatcher, message: unknown, version: '1.0' | '0.3') =>
    d.dispatch(message, { principal: LOCAL_PRINCIPAL, version, signal: new AbortController().signal });

  for (const validateResults of [false, true]) {
    it(`hands the text on as the result's JSON, and the response still reads and serialises as the task (result checks ${validateResults ? 'on' : 'off'})`, async () => {
      const out = await call(
        dispatcher(validateResults),
        { jsonrpc: '2.0', id: 'r1', method: 'GetTask', params: { id: 't1' } },
        '1.0',
      );
      assert.equal(out.kind, 'response');
      if (out.kind !== 'response') return;
      assert.equal(out.resultJson, text);
      assert.deepEqual((out.response as { result?: unknown }).result, task);
      assert.equal('error' in out.response, false);
      assert.equal(JSON.stringify(out.response), JSON.stringify({ jsonrpc: '2.0', id: 'r1', result: task }));
      assert.equal(resultText('r1', text), JSON.stringify({ jsonrpc: '2.0', id: 'r1', result: task }));
    });
  }

  it('does not parse the text when nothing needs the value (no check, no codec)', async () => {
    let parsed = 0;
    class Counted extends JsonText<unknown> {
      override get value(): unknown {
        parsed++;
        return super.value;
      }
    }
    const d = new Dispatcher({
      table: buildMethodTable(),
      facade: { tasks: { getForClient: () => Promise.resolve(new Counted(text)) } },
      card: {},
      logger: silentLogger,
    } as unknown as DispatcherOptions);
    const out = await call(d, { jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 't1' } }, '1.0');
    assert.equal(out.kind === 'response' ? out.resultJson : undefined, text);
    assert.equal(parsed, 0);
  });

  it('encodes the parsed value when a codec re-encodes the result (v0.3), and gives no text', async () => {
    const out = await call(
      dispatcher(false),
      { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: 't1' } },
      '0.3',
    );
    assert.equal(out.kind, 'response');
    if (out.kind !== 'response') return;
    assert.equal(out.resultJson, undefined);
    const result = (out.response as { result?: { kind?: string; id?: string } }).result;
    assert.equal(result?.kind, 'task', 'the 0.3 form');
    assert.equal(result?.id, 't1');
  });

  it('checks the parsed value against the result schema when checks are on', async () => {
    const bad = new Dispatcher({
      table: buildMethodTable(),
      facade: { tasks: { getForClient: () => Promise.resolve(new JsonText('{"id":"t1"}')) } },
      card: {},
      logger: silentLogger,
      validateResults: true,
    } as unknown as DispatcherOptions);
    const out = await call(bad, { jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 't1' } }, '1.0');
    assert.equal(out.kind, 'response');
    if (out.kind !== 'response') return;
    assert.ok('error' in out.response, 'a result that does not match its schema is an error');
    assert.equal(out.resultJson, undefined);
  });
});

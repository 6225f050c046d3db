import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_TRACER } from '../../../../src/application/ports/tracer.port.ts';
import type { AccessRecord } from '../../../../src/protocol/server/access-log.ts';
import {
  NO_REQUEST_TELEMETRY,
  requestTelemetry,
  takeTraceparent,
} from '../../../../src/protocol/server/request-telemetry.ts';
import { recordingTracer } from '../../../support/fakes/recording-tracer.ts';

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const known = (m: string): boolean => m === 'GetTask';
const rec = (over: Partial<AccessRecord> = {}): AccessRecord => ({
  transport: 'stdio',
  method: 'GetTask',
  principal: 'u',
  outcome: 'ok',
  ms: 3,
  correlationId: undefined,
  ...over,
});

describe('request telemetry', () => {
  it('takes a stdio request’s traceparent from params._meta and removes _meta from the params', () => {
    const params: Record<string, unknown> = { id: 't1', _meta: { traceparent: TP } };
    assert.equal(takeTraceparent(params), TP);
    assert.deepEqual(params, { id: 't1' });
    assert.equal(takeTraceparent({ id: 't1' }), undefined);
    assert.equal(takeTraceparent([1, 2]), undefined);
    const odd: Record<string, unknown> = { _meta: { traceparent: 42 } };
    assert.equal(takeTraceparent(odd), undefined);
    assert.deepEqual(odd, {});
  });

  it('is the shared no-op when neither traces nor metrics are on', () => {
    assert.equal(requestTelemetry(NO_TRACER, undefined, known), NO_REQUEST_TELEMETRY);
  });

  it('makes a server span continuing the client’s traceparent, current while the request runs, named from the method table only', async () => {
    const tracer = recordingTracer();
    const observed: AccessRecord[] = [];
    const t = requestTelemetry(tracer, { observe: (r) => observed.push(r) }, known);
    const o = t.begin('stdio', TP, 'GetTask');
    await o.run(async () => Promise.resolve(tracer.start('turn')));
    o.end(rec());
    const u = t.begin('stdio', undefined, 'Evil/' + 'x'.repeat(50));
    u.end(rec({ method: 'Evil/x', outcome: -32601 }));
    const [first, turn, second] = tracer.spans;
    assert.equal(first?.name, 'jsonrpc GetTask');
    assert.equal(first?.options.kind, 'server');
    assert.equal(first?.options.traceparent, TP);
    assert.equal(first?.attributes['rpc.method'], 'GetTask');
    assert.equal(first?.ended, true);
    assert.equal(turn?.parent, first);
    assert.equal(second?.name, 'jsonrpc unknown');
    assert.equal(second?.attributes['rpc.method'], 'unknown');
    assert.equal(second?.attributes['rpc.jsonrpc.error_code'], -32601);
    assert.deepEqual(second?.errors, ['answered with error -32601']);
    assert.equal(observed.length, 2);
  });
});

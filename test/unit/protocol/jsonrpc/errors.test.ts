import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import { toErrorObject } from '../../../../src/protocol/jsonrpc/jsonrpc.errors.ts';

describe('toErrorObject', () => {
  const err = new AppError('PLAN_ERROR', 'not applied', {
    details: { reason: 'conflict', type: 'X', files: ['a.ts'] },
  });

  it('keeps the reason and type of the error whatever its details say (extension and v0.3)', () => {
    for (const surface of ['extension', 'a2a-v03'] as const) {
      const data = toErrorObject(err, surface, 'c-1').data as Record<string, unknown>;
      assert.deepEqual(
        [data['reason'], data['type'], data['correlationId'], data['files']],
        ['PLAN_ERROR', 'PlanError', 'c-1', ['a.ts']],
        surface,
      );
    }
  });

  it('keeps them in the v1.0 ErrorInfo too', () => {
    const [info] = toErrorObject(err, 'a2a-v1', 'c-1').data as Array<{
      reason: string;
      metadata: Record<string, string>;
    }>;
    assert.equal(info?.reason, 'PLAN_ERROR');
    assert.equal(info?.metadata['type'], 'PlanError');
    assert.equal(info?.metadata['correlationId'], 'c-1');
    assert.equal(info?.metadata['files'], '["a.ts"]');
  });
});

describe('toErrorObject with a logged failure', () => {
  it('answers with the correlation id the failure was logged under', () => {
    const logged = new AppError('UNAVAILABLE', 'storage is read-only', { details: { correlationId: 'logged-1' } });
    assert.equal(
      (toErrorObject(logged, 'extension', 'fresh').data as Record<string, unknown>)['correlationId'],
      'logged-1',
    );
    const [info] = toErrorObject(logged, 'a2a-v1', 'fresh').data as Array<{ metadata: Record<string, string> }>;
    assert.equal(info?.metadata['correlationId'], 'logged-1');
  });
});

describe('toErrorObject on the surfaces', () => {
  it('never leaks the text of an unexpected error', () => {
    const e = toErrorObject(new Error('SELECT * FROM secrets failed at /home/x'), 'extension', 'cid');
    assert.equal(e.code, -32603);
    assert.equal(e.message, 'Internal error');
    assert.doesNotMatch(JSON.stringify(e), /SELECT|home/);
    assert.equal((e.data as { correlationId: string }).correlationId, 'cid');
  });
  it('uses typed error details for A2A v1.0 and a flat object for extensions', () => {
    const err = new AppError('TASK_NOT_FOUND', 'Task x was not found', { details: { taskId: 'x' } });
    const v1 = toErrorObject(err, 'a2a-v1', 'c1');
    assert.equal(v1.code, -32001);
    assert.ok(Array.isArray(v1.data));
    const ext = toErrorObject(new AppError('ALREADY_EXISTS', 'dup'), 'extension', 'c2');
    assert.equal(ext.code, -32005);
    assert.equal((ext.data as { type: string }).type, 'DuplicateEntityError');
  });
});

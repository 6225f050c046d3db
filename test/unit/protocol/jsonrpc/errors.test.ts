import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.js';
import { toErrorObject } from '../../../../src/protocol/jsonrpc/errors.js';

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

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.js';
import { toErrorObject } from '../../../../src/protocol/jsonrpc/errors.js';

describe('toErrorObject', () => {
  const err = new AppError('PLAN_ERROR', 'not applied', { details: { reason: 'conflict', type: 'X', correlationId: 'forged', files: ['a.ts'] } });

  it('keeps the reason, type and correlation id of the error whatever its details say (extension and v0.3)', () => {
    for (const surface of ['extension', 'a2a-v03'] as const) {
      const data = toErrorObject(err, surface, 'c-1').data as Record<string, unknown>;
      assert.deepEqual([data['reason'], data['type'], data['correlationId'], data['files']], ['PLAN_ERROR', 'PlanError', 'c-1', ['a.ts']], surface);
    }
  });

  it('keeps them in the v1.0 ErrorInfo too', () => {
    const [info] = toErrorObject(err, 'a2a-v1', 'c-1').data as Array<{ reason: string; metadata: Record<string, string> }>;
    assert.equal(info?.reason, 'PLAN_ERROR');
    assert.equal(info?.metadata['type'], 'PlanError');
    assert.equal(info?.metadata['correlationId'], 'c-1');
    assert.equal(info?.metadata['files'], '["a.ts"]');
  });
});

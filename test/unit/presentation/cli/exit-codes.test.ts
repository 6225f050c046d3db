import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError, ERROR_REASONS, type ErrorReason } from '../../../../src/domain/errors.ts';
import { RpcError, toErrorObject, type ErrorSurface } from '../../../../src/protocol/jsonrpc/jsonrpc.errors.ts';
import { A2AClientError } from '../../../../src/protocol/client/index.ts';
import { EXIT_CODES, exitReasonOf, type ExitReason } from '../../../../src/presentation/cli/exit-codes.ts';

/** What each reason the agent may name exits with (the CLI's documented codes). */
const EXPECTED: Record<ErrorReason, ExitReason> = {
  NOT_FOUND: 'NOT_FOUND',
  TASK_NOT_FOUND: 'NOT_FOUND',
  UNAUTHENTICATED: 'AUTH',
  FORBIDDEN: 'AUTH',
  TASK_NOT_CANCELABLE: 'INVALID_STATE',
  UNSUPPORTED_OPERATION: 'INVALID_STATE',
  INVALID_STATE: 'INVALID_STATE',
  PUSH_NOT_SUPPORTED: 'INVALID_STATE',
  EXTENDED_CARD_NOT_CONFIGURED: 'INVALID_STATE',
  ALREADY_EXISTS: 'INVALID_STATE',
  REVISION_CONFLICT: 'INVALID_STATE',
  IN_USE: 'INVALID_STATE',
  PLAN_ERROR: 'PLAN_ERROR',
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  INVALID_PARAMS: 'INVALID_PARAMS',
  CONTENT_TYPE_NOT_SUPPORTED: 'INVALID_PARAMS',
  VERSION_NOT_SUPPORTED: 'VERSION_NOT_SUPPORTED',
  VERSION_MISMATCH: 'VERSION_NOT_SUPPORTED',
  EXTENSION_REQUIRED: 'VERSION_NOT_SUPPORTED',
  INVALID_AGENT_RESPONSE: 'INTERNAL',
  UNAVAILABLE: 'INTERNAL',
  INTERNAL: 'INTERNAL',
};
const SURFACES: ErrorSurface[] = ['extension', 'a2a-v1', 'a2a-v03'];

describe('CLI exit codes', () => {
  it('exits by the reason the agent names, the same on every error surface', () => {
    for (const reason of ERROR_REASONS) {
      for (const surface of SURFACES) {
        const wire = toErrorObject(new AppError(reason, `a ${reason}`), surface, 'c-1');
        assert.equal(exitReasonOf(new A2AClientError(wire)), EXPECTED[reason], `${reason} on ${surface}`);
      }
    }
  });

  it('exits by the reason even when the error type is one it does not know', () => {
    const err = new A2AClientError({
      code: -32004,
      message: 'in use',
      data: { type: 'SomeNewError', reason: 'IN_USE' },
    });
    assert.equal(exitReasonOf(err), 'INVALID_STATE');
  });

  it('treats an unknown method as a request that cannot be served', () => {
    const wire = toErrorObject(new RpcError(-32601, 'Method not found: x', 'MethodNotFoundError'), 'extension', 'c-2');
    assert.equal(exitReasonOf(new A2AClientError(wire)), 'INVALID_STATE');
    assert.equal(EXIT_CODES[exitReasonOf(new A2AClientError(wire))], 5);
  });

  it('falls back to the HTTP status and the code for an answer that names no known reason', () => {
    assert.equal(exitReasonOf(new A2AClientError({ code: -32000, message: 'no' }, 401)), 'AUTH');
    assert.equal(
      exitReasonOf(new A2AClientError({ code: -32602, message: 'bad', data: { reason: 'SOMETHING_ELSE' } })),
      'INVALID_PARAMS',
    );
    assert.equal(
      exitReasonOf(new A2AClientError({ code: -32000, message: 'odd', data: { reason: 'toString' } })),
      'INTERNAL',
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_REASONS } from '../../../../src/domain/errors.ts';
import { A2A_CODES, EXTENSION_CODES, HTTP_STATUS } from '../../../../src/protocol/jsonrpc/codes.ts';

// The tables are total by their type (Record<ErrorReason, number>); what the compiler cannot check
// is that each value is a code of its surface, and the codes the spec and DESIGN.md §3.3 fix.
describe('error tables', () => {
  it('use JSON-RPC error codes and HTTP error statuses only', () => {
    assert.ok(ERROR_REASONS.length >= 20, `the reasons are read (${ERROR_REASONS.length})`);
    for (const r of ERROR_REASONS) {
      for (const [surface, table] of [
        ['a2a', A2A_CODES],
        ['extension', EXTENSION_CODES],
      ] as const) {
        const code = table[r];
        assert.ok(Number.isInteger(code) && code >= -32768 && code <= -32000, `${surface} ${r}: ${code}`);
      }
      assert.ok(Number.isInteger(HTTP_STATUS[r]) && HTTP_STATUS[r] >= 400 && HTTP_STATUS[r] <= 599, `HTTP ${r}`);
    }
  });

  it('give the extension methods the seed taxonomy of DESIGN.md §3.3', () => {
    const taxonomy = {
      NOT_FOUND: -32001,
      UNAUTHENTICATED: -32002,
      FORBIDDEN: -32003,
      INVALID_STATE: -32004,
      ALREADY_EXISTS: -32005,
      BUDGET_EXCEEDED: -32006,
      VERSION_MISMATCH: -32007,
      PLAN_ERROR: -32008,
      INVALID_PARAMS: -32602,
      INTERNAL: -32603,
    } as const;
    for (const [reason, code] of Object.entries(taxonomy))
      assert.equal(EXTENSION_CODES[reason as keyof typeof taxonomy], code, reason);
  });

  it('give standard operations the A2A codes (spec §5.4)', () => {
    assert.deepEqual(
      [
        A2A_CODES.TASK_NOT_FOUND,
        A2A_CODES.TASK_NOT_CANCELABLE,
        A2A_CODES.PUSH_NOT_SUPPORTED,
        A2A_CODES.UNSUPPORTED_OPERATION,
        A2A_CODES.CONTENT_TYPE_NOT_SUPPORTED,
        A2A_CODES.INVALID_AGENT_RESPONSE,
        A2A_CODES.EXTENDED_CARD_NOT_CONFIGURED,
        A2A_CODES.EXTENSION_REQUIRED,
        A2A_CODES.VERSION_NOT_SUPPORTED,
      ],
      [-32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009],
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_REASONS } from '../../../../src/domain/errors.js';
import { A2A_CODES, EXTENSION_CODES, HTTP_STATUS } from '../../../../src/protocol/jsonrpc/codes.js';

describe('error tables', () => {
  it('map every reason on every surface', () => {
    for (const r of ERROR_REASONS) {
      assert.equal(typeof A2A_CODES[r], 'number', r);
      assert.equal(typeof EXTENSION_CODES[r], 'number', r);
      assert.equal(typeof HTTP_STATUS[r], 'number', r);
    }
  });
});

/** The one approval answer parser, for every path an answer takes (issue #8, defect 3). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import { parseApprovalAnswer } from '../../../../src/domain/plan/approval.ts';

describe('the approval answer parser (one for every path)', () => {
  it('a clear yes approves; a clear no rejects', () => {
    for (const t of ['yes', 'Y', 'approve', 'OK', ' yes. '])
      assert.deepEqual(parseApprovalAnswer({ text: t }), { decision: 'approve' }, t);
    for (const t of ['no', 'N', 'reject', 'No!', 'rejected'])
      assert.deepEqual(parseApprovalAnswer({ text: t }), { decision: 'reject' }, t);
  });

  it('guidance never approves: it is a rejection with that guidance', () => {
    assert.deepEqual(parseApprovalAnswer({ text: 'go ahead' }), { decision: 'reject', guidance: 'go ahead' });
    assert.deepEqual(parseApprovalAnswer({ text: 'yes but rename it first' }), {
      decision: 'reject',
      guidance: 'yes but rename it first',
    });
  });

  it('reads the structured answer, which wins over text', () => {
    assert.deepEqual(parseApprovalAnswer({ text: 'no', approval: { decision: 'approve' } }), { decision: 'approve' });
    assert.deepEqual(parseApprovalAnswer({ approval: { decision: 'reject', guidance: ' later ' } }), {
      decision: 'reject',
      guidance: 'later',
    });
  });

  it('refuses what is no answer, listing the valid answers', () => {
    const cases: Array<[Parameters<typeof parseApprovalAnswer>[0], RegExp]> = [
      [{ text: '   ' }, /the answer is empty/],
      [{ approval: { decision: 'maybe' } }, /decision must be "approve" or "reject"/],
      [{ approval: 'yes' }, /must be an object/],
      [{ approval: { decision: 'approve', guidance: 'but differently' } }, /guidance comes with a rejection/],
      [{ approval: { decision: 'reject', extra: 1 } }, /unknown field extra/],
      [{ approval: { decision: 'reject', guidance: 7 } }, /guidance must be a string/],
    ];
    for (const [input, why] of cases) {
      assert.throws(
        () => parseApprovalAnswer(input),
        (err: unknown) =>
          err instanceof AppError &&
          err.reason === 'INVALID_PARAMS' &&
          why.test(err.message) &&
          /Valid answers: approve \(yes/.test(err.message),
        JSON.stringify(input),
      );
    }
  });
});

/** The status line: an error is read whole (message and hint wrapped over up to three rows). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statusRows } from '../../src/presentation/tui/Bottom.tsx';
import { initialState } from '../../src/presentation/tui/state.ts';

const withNotice = (notice: Parameters<typeof statusRows>[0]['notice']): Parameters<typeof statusRows>[0] => ({
  ...initialState(),
  notice,
});

describe('tui status line', () => {
  it('wraps an error and its hint instead of cutting the hint off', () => {
    const rows = statusRows(
      withNotice({
        level: 'error',
        report: {
          message: 'No action named nosuch/action',
          type: 'ResourceNotFoundError',
          hint: 'see the available ones with `agents action list`',
        },
      }),
      40,
    );
    assert.equal(rows.length, 3);
    assert.ok(rows.every((r) => [...r].length <= 40));
    assert.equal(
      rows.join(''),
      'error: No action named nosuch/action (ResourceNotFoundError) · hint: see the available ones with `agents action list`',
    );
  });

  it('keeps to three rows for a longer one, and to one row for news', () => {
    const long = statusRows(withNotice({ level: 'error', report: { message: 'x'.repeat(500), type: 'Error' } }), 40);
    assert.equal(long.length, 3);
    assert.ok(long[2]?.endsWith('…'));
    assert.deepEqual(statusRows(withNotice({ level: 'info', text: 'applied: 1 commit' }), 40), ['applied: 1 commit']);
    assert.deepEqual(statusRows(withNotice(undefined), 40), [' ']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnAbort } from '../../../../src/application/tasks/turn-abort.ts';

describe('TurnAbort', () => {
  it('aborts a signal read before, with the reason, and fires its abort event once', () => {
    const abort = new TurnAbort();
    const signal = abort.signal;
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    assert.equal(abort.aborted, false);
    assert.equal(signal.aborted, false);
    const reason = new Error('canceled');
    abort.abort(reason);
    abort.abort(new Error('again'));
    assert.equal(abort.aborted, true);
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, reason);
    assert.equal(fired, 1);
    assert.equal(abort.signal, signal);
  });

  it('gives a signal first read after the abort as aborted, with the first reason', () => {
    const abort = new TurnAbort();
    const reason = new Error('finished elsewhere');
    abort.abort(reason);
    abort.abort(new Error('again'));
    assert.equal(abort.aborted, true);
    assert.equal(abort.signal.aborted, true);
    assert.equal(abort.signal.reason, reason);
  });

  it('aborts without a reason as AbortController does (an AbortError)', () => {
    const early = new TurnAbort();
    early.abort();
    const late = new TurnAbort();
    const signal = late.signal;
    late.abort();
    for (const s of [early.signal, signal]) {
      assert.equal(s.aborted, true);
      assert.equal((s.reason as Error).name, 'AbortError');
    }
  });
});

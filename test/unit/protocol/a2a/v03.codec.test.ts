import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TASK_STATES } from '../../../../src/domain/a2a.model.ts';
import {
  messageFromV03,
  messageToV03,
  stateFromV03,
  stateToV03,
  streamResponseToV03,
} from '../../../../src/protocol/a2a/v03.codec.ts';

describe('v0.3 codec', () => {
  it('round-trips messages and states', () => {
    const m = {
      messageId: 'm',
      role: 'ROLE_USER' as const,
      parts: [{ text: 'hi' }, { data: { a: 1 } }, { url: 'https://x/y', mediaType: 'text/plain', filename: 'y' }],
      contextId: 'c',
    };
    assert.deepEqual(messageFromV03(messageToV03(m) as Parameters<typeof messageFromV03>[0]), m);
    for (const s of TASK_STATES) assert.equal(stateFromV03(stateToV03(s)), s);
    assert.equal(stateToV03('TASK_STATE_INPUT_REQUIRED'), 'input-required');
  });
  it('marks final status updates', () => {
    const ev = (state: (typeof TASK_STATES)[number]) =>
      streamResponseToV03({ statusUpdate: { taskId: 't', contextId: 'c', status: { state } } });
    assert.equal(ev('TASK_STATE_WORKING')['final'], false);
    assert.equal(ev('TASK_STATE_COMPLETED')['final'], true);
    assert.equal(ev('TASK_STATE_INPUT_REQUIRED')['final'], true);
  });
});

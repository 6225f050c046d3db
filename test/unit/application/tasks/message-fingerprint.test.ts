import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '../../../../src/domain/a2a.model.ts';
import { messageFingerprint } from '../../../../src/application/tasks/message-fingerprint.ts';

describe('messageFingerprint', () => {
  const message: Message = {
    messageId: 'm1',
    role: 'ROLE_USER',
    parts: [{ text: 'hi', metadata: { b: 1, a: 2 } }],
    contextId: 'c1',
  };

  it('gives the digest stored keys were made with (a retry after an upgrade is still recognised)', () => {
    assert.equal(messageFingerprint(message), 'r9eJP8GQ6qczQ_M12IUp6WJZmz8_peIc5OKBE7zSpbw');
  });

  it('ignores key order and the messageId, and tells different content apart', () => {
    const reordered: Message = {
      contextId: 'c1',
      parts: [{ metadata: { a: 2, b: 1 }, text: 'hi' }],
      role: 'ROLE_USER',
      messageId: 'm2',
    };
    assert.equal(messageFingerprint(reordered), messageFingerprint(message));
    assert.notEqual(messageFingerprint({ ...message, parts: [{ text: 'hi!' }] }), messageFingerprint(message));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyEvent,
  isInterrupted,
  isTerminal,
  Part,
  TaskPushNotificationConfig,
  Timestamp,
  type Task,
} from '../../../src/domain/a2a.model.js';
import { Channel } from '../../../src/domain/async-channel.js';
import { chunkText } from '../../../src/application/actors/echo.actor.js';

describe('task states', () => {
  it('knows terminal and interrupted states', () => {
    assert.ok(isTerminal('TASK_STATE_CANCELED') && isTerminal('TASK_STATE_REJECTED'));
    assert.ok(!isTerminal('TASK_STATE_WORKING') && !isTerminal('TASK_STATE_INPUT_REQUIRED'));
    assert.ok(isInterrupted('TASK_STATE_AUTH_REQUIRED') && !isInterrupted('TASK_STATE_SUBMITTED'));
  });
});

describe('applyEvent', () => {
  const base = (): Task => ({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } });
  it('appends chunks to an artifact and replaces one that is sent again without append', () => {
    const t = base();
    applyEvent(t, {
      seq: 1,
      kind: 'artifact',
      event: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'x' }] } },
    });
    applyEvent(t, {
      seq: 2,
      kind: 'artifact',
      event: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'y' }] }, append: true },
    });
    assert.deepEqual(t.artifacts?.[0]?.parts, [{ text: 'x' }, { text: 'y' }]);
    applyEvent(t, {
      seq: 3,
      kind: 'artifact',
      event: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'z' }] } },
    });
    assert.deepEqual(t.artifacts?.[0]?.parts, [{ text: 'z' }]);
    applyEvent(t, {
      seq: 4,
      kind: 'status',
      event: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } },
    });
    assert.equal(t.status.state, 'TASK_STATE_COMPLETED');
  });
  it('does not let a later change to the event alter the task', () => {
    const t = base();
    const artifact = { artifactId: 'a', parts: [{ text: 'x' }] };
    applyEvent(t, { seq: 1, kind: 'artifact', event: { taskId: 't', contextId: 'c', artifact } });
    artifact.parts.push({ text: 'later' });
    assert.equal(t.artifacts?.[0]?.parts.length, 1);
  });
});

describe('schemas', () => {
  it('requires exactly one content field in a part', () => {
    assert.ok(Part.safeParse({ text: 'a' }).success);
    assert.ok(Part.safeParse({ url: 'https://example.com/f.png', mediaType: 'image/png' }).success);
    assert.ok(!Part.safeParse({}).success);
    assert.ok(!Part.safeParse({ text: 'a', data: {} }).success);
    assert.ok(!Part.safeParse({ raw: 'not base64!' }).success);
  });
  it('accepts RFC 3339 timestamps with any offset, and only real dates', () => {
    assert.ok(Timestamp.safeParse('2026-01-31T12:00:00.000Z').success);
    assert.ok(Timestamp.safeParse('2026-01-31T12:00:00Z').success);
    assert.ok(Timestamp.safeParse('2026-01-31T12:00:00+02:00').success, 'an offset is RFC 3339 (issue #8)');
    assert.ok(!Timestamp.safeParse('2026-02-31T12:00:00Z').success, 'February 31st is refused');
    assert.ok(!Timestamp.safeParse('yesterday').success);
  });
  it('accepts only http(s) webhook URLs', () => {
    assert.ok(TaskPushNotificationConfig.safeParse({ url: 'https://x.example/h' }).success);
    assert.ok(!TaskPushNotificationConfig.safeParse({ url: 'file:///etc/passwd' }).success);
    assert.ok(!TaskPushNotificationConfig.safeParse({ url: 'javascript:alert(1)' }).success);
  });
});

describe('chunkText', () => {
  it('splits on word boundaries and loses nothing', () => {
    const text = 'the quick brown fox jumps over the lazy dog';
    const chunks = chunkText(text, 4);
    assert.ok(chunks.length >= 3 && chunks.length <= 5);
    assert.equal(chunks.join(''), text);
    assert.deepEqual(chunkText('', 4), ['']);
  });
});

describe('Channel', () => {
  it('delivers pushed values in order, then ends, and runs its cleanup once', async () => {
    let cleaned = 0;
    const ch = new Channel<number>(() => cleaned++);
    ch.push(1);
    ch.push(2);
    setTimeout(() => {
      ch.push(3);
      ch.end();
      ch.end();
    }, 5);
    const got: number[] = [];
    for await (const v of ch) got.push(v);
    assert.deepEqual(got, [1, 2, 3]);
    assert.equal(cleaned, 1);
  });
  it('raises a failure after the buffered values', async () => {
    const ch = new Channel<number>();
    ch.push(1);
    ch.fail(new Error('boom'));
    const got: number[] = [];
    await assert.rejects(async () => {
      for await (const v of ch) got.push(v);
    }, /boom/);
    assert.deepEqual(got, [1]);
  });
  it('raises a failure to a consumer already waiting', async () => {
    const ch = new Channel<number>();
    const pending = ch.next();
    ch.fail(new Error('late boom'));
    await assert.rejects(pending, /late boom/);
    assert.deepEqual(await ch.next(), { value: undefined, done: true });
  });
  it('runs the cleanup when the consumer leaves early', async () => {
    let cleaned = false;
    const ch = new Channel<number>(() => (cleaned = true));
    ch.push(1);
    ch.push(2);
    for await (const v of ch) if (v === 1) break;
    assert.ok(cleaned);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  acceptsMediaType,
  applyEvent,
  isInterrupted,
  isTerminal,
  Part,
  TaskPushNotificationConfig,
  parseTimestamp,
  Timestamp,
  toUtcTimestamp,
  type Task,
  type TaskEvent,
} from '../../../src/domain/a2a.model.ts';

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
  it('keeps its own copy of a new artifact, so that later chunks leave the first event as it was sent', () => {
    const t = base();
    const first: TaskEvent = {
      seq: 1,
      kind: 'artifact',
      event: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'x' }] } },
    };
    applyEvent(t, first);
    applyEvent(t, {
      seq: 2,
      kind: 'artifact',
      event: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'y' }] }, append: true },
    });
    assert.deepEqual(t.artifacts?.[0]?.parts, [{ text: 'x' }, { text: 'y' }]);
    // A stream item still holds the first event (the 0.3 codec encodes it from these objects).
    assert.deepEqual(first.event.artifact.parts, [{ text: 'x' }]);
  });
  it('adds a status message to the history once, and leaves a history that holds it as it is', () => {
    const t = base();
    const said = (seq: number, messageId: string): TaskEvent => ({
      seq,
      kind: 'status',
      event: {
        taskId: 't',
        contextId: 'c',
        status: {
          state: 'TASK_STATE_WORKING',
          message: { messageId, role: 'ROLE_AGENT', parts: [{ text: messageId }] },
        },
      },
    });
    applyEvent(t, said(1, 'm1'));
    applyEvent(t, {
      seq: 2,
      kind: 'status',
      event: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } },
    });
    applyEvent(t, said(3, 'm2'));
    applyEvent(t, said(3, 'm2'));
    assert.deepEqual(
      t.history?.map((m) => m.messageId),
      ['m1', 'm2'],
    );
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

describe('RFC 3339 timestamps', () => {
  it('accepts any offset and 0 to 9 fractional digits', () => {
    for (const s of [
      '2026-12-01T08:10:00Z',
      '2026-12-01T08:10:00.1Z',
      '2026-12-01T08:10:00.123456+00:00',
      '2026-12-01T08:10:00.123456789-05:30',
      '2026-12-01t08:10:00z',
      '2026-12-01T23:30:00+14:00',
    ]) {
      assert.ok(Timestamp.safeParse(s).success, s);
    }
  });
  it('refuses what is not a real RFC 3339 instant', () => {
    for (const s of [
      '2026-02-31T00:00:00Z',
      '2026-12-01T24:00:00Z',
      '2026-12-01T08:10:00',
      '2026-12-01 08:10:00Z',
      '2026-12-01T08:10:00.1234567890Z',
      '2026-12-01T08:10:00+24:00',
      'yesterday',
    ]) {
      assert.ok(!Timestamp.safeParse(s).success, s);
    }
  });
  it('normalises to UTC, rounding sub-millisecond digits up so that ">=" means at or after', () => {
    assert.equal(toUtcTimestamp('2026-12-01T08:10:00.123456+00:00'), '2026-12-01T08:10:00.124Z');
    assert.equal(toUtcTimestamp('2026-12-01T08:10:00.123-05:30'), '2026-12-01T13:40:00.123Z');
    assert.equal(toUtcTimestamp('2026-12-01T00:30:00+01:00'), '2026-11-30T23:30:00.000Z');
    assert.equal(parseTimestamp('2026-12-01T08:10:00.999999999Z'), Date.parse('2026-12-01T08:10:01.000Z'));
  });
});

describe('acceptsMediaType', () => {
  it('accepts anything without a list, and matches exact types, type/* and */* ranges ignoring parameters', () => {
    assert.equal(acceptsMediaType(undefined, 'text/plain'), true);
    assert.equal(acceptsMediaType([], 'text/plain'), true);
    assert.equal(acceptsMediaType(['text/plain'], 'text/plain'), true);
    assert.equal(acceptsMediaType([' Text/Plain ; charset=utf-8'], 'text/plain'), true);
    assert.equal(acceptsMediaType(['image/png', 'text/*'], 'text/plain'), true);
    assert.equal(acceptsMediaType(['*/*'], 'text/plain'), true);
    assert.equal(acceptsMediaType(['text'], 'text/plain'), true, 'the bare type of early A2A examples');
    assert.equal(acceptsMediaType(['image/png', 'application/json'], 'text/plain'), false);
    assert.equal(acceptsMediaType(['text/html'], 'text/plain'), false);
    assert.equal(acceptsMediaType(['application/*'], 'text/plain'), false);
  });
});

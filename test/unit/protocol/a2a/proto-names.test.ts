import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import { METHODS } from '../../../../src/protocol/a2a/method-table.ts';
import { jsonName, normaliseProtoNames, PROTO_REQUEST_MESSAGES } from '../../../../src/protocol/a2a/proto-names.ts';

const PROTO = readFileSync(fileURLToPath(new URL('../../../fixtures/a2a/a2a.proto', import.meta.url)), 'utf8');

/** message name → field name → field type, read from the normative proto. */
function protoMessages(): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  const re = /^message (\w+) \{([\s\S]*?)^\}/gm;
  for (const m of PROTO.matchAll(re)) {
    const fields = new Map<string, string>();
    for (const f of (m[2] ?? '').matchAll(/^\s*(?:repeated |optional )?([\w.]+(?:<[^>]+>)?) (\w+) = \d+/gm))
      fields.set(f[2] ?? '', f[1] ?? '');
    out.set(m[1] ?? '', fields);
  }
  return out;
}

describe('proto field names', () => {
  it('lists exactly the fields of each request message of the proto, with the right nested types', () => {
    const proto = protoMessages();
    for (const [name, fields] of Object.entries(PROTO_REQUEST_MESSAGES) as [string, Record<string, string | null>][]) {
      const p = proto.get(name);
      assert.ok(p, `${name} is a message of a2a.proto`);
      assert.deepEqual(Object.keys(fields).sort(), [...p.keys()].sort(), name);
      for (const [field, child] of Object.entries(fields)) {
        const type: string = p.get(field) ?? '';
        const isMessage: boolean =
          /^[A-Z]/.test(type) && !type.startsWith('google.') && !['TaskState', 'Role'].includes(type);
        assert.equal(child, isMessage ? type : null, `${name}.${field} (${type})`);
      }
    }
  });

  it('names the request message of every standard method, and each is an rpc request type of the proto', () => {
    for (const m of METHODS.filter((x) => x.surface === 'a2a')) {
      assert.ok(m.proto, `${m.name} names its proto request message`);
      const rpc = new RegExp(`rpc ${m.name}\\((\\w+)\\)`).exec(PROTO);
      assert.equal(rpc?.[1], m.proto, m.name);
    }
  });

  it('uses protoc json names', () => {
    assert.equal(jsonName('status_timestamp_after'), 'statusTimestampAfter');
    assert.equal(jsonName('task_push_notification_config'), 'taskPushNotificationConfig');
    assert.equal(jsonName('id'), 'id');
  });

  it('rewrites proto names at every level, and leaves metadata and data alone', () => {
    const input = {
      message: {
        message_id: 'm1',
        context_id: 'c1',
        reference_task_ids: ['t0'],
        role: 'ROLE_USER',
        parts: [
          { text: 'hi', media_type: 'text/plain' },
          { data: { snake_key: 1 }, metadata: { my_key: 2 } },
        ],
        metadata: { keep_me: true },
      },
      configuration: {
        accepted_output_modes: ['text/plain'],
        return_immediately: true,
        history_length: 2,
        task_push_notification_config: {
          url: 'https://example.com/h',
          task_id: 't',
          authentication: { scheme: 'Bearer', credentials: 'x' },
        },
      },
    };
    assert.deepEqual(normaliseProtoNames('SendMessageRequest', input), {
      message: {
        messageId: 'm1',
        contextId: 'c1',
        referenceTaskIds: ['t0'],
        role: 'ROLE_USER',
        parts: [
          { text: 'hi', mediaType: 'text/plain' },
          { data: { snake_key: 1 }, metadata: { my_key: 2 } },
        ],
        metadata: { keep_me: true },
      },
      configuration: {
        acceptedOutputModes: ['text/plain'],
        returnImmediately: true,
        historyLength: 2,
        taskPushNotificationConfig: {
          url: 'https://example.com/h',
          taskId: 't',
          authentication: { scheme: 'Bearer', credentials: 'x' },
        },
      },
    });
  });

  it('returns the very same object when every name is already a JSON name', () => {
    const input = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } };
    assert.equal(normaliseProtoNames('SendMessageRequest', input), input);
  });

  it('accepts both spellings with the same value, and refuses them with different values', () => {
    assert.deepEqual(
      normaliseProtoNames('GetTaskPushNotificationConfigRequest', { task_id: 't', taskId: 't', id: 'c' }),
      { taskId: 't', id: 'c' },
    );
    assert.throws(
      () => normaliseProtoNames('ListTasksRequest', { page_size: 5, pageSize: 6 }),
      (e: unknown) => e instanceof AppError && e.reason === 'INVALID_PARAMS' && e.fields[0]?.field === 'pageSize',
    );
    assert.throws(
      () =>
        normaliseProtoNames('SendMessageRequest', {
          message: { parts: [{ media_type: 'a' }, { mediaType: 'b', media_type: 'c' }] },
        }),
      (e: unknown) => e instanceof AppError && e.fields[0]?.field === 'message.parts.1.mediaType',
    );
  });
});

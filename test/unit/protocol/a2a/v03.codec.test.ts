import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { AppError, ERROR_REASONS } from '../../../../src/domain/errors.js';
import { buildMethodTable, METHODS } from '../../../../src/protocol/a2a/method-table.js';
import { defineMethod } from '../../../../src/protocol/a2a/method.js';
import {
  messageFromV03,
  messageToV03,
  stateFromV03,
  stateToV03,
  streamResponseToV03,
} from '../../../../src/protocol/a2a/v03.codec.js';
import { parseVersion } from '../../../../src/protocol/a2a/versions.js';
import { A2A_CODES, EXTENSION_CODES, HTTP_STATUS } from '../../../../src/protocol/jsonrpc/codes.js';
import { checkEnvelope } from '../../../../src/protocol/jsonrpc/envelope.js';
import { toErrorObject } from '../../../../src/protocol/jsonrpc/errors.js';
import { createLineFramer } from '../../../../src/protocol/jsonrpc/framing.js';
import { TASK_STATES } from '../../../../src/domain/a2a.model.js';

describe('method table', () => {
  it('refuses a name claimed twice', () => {
    const a = defineMethod({
      name: 'x/one',
      aliases: ['dup'],
      surface: 'extension',
      summary: '',
      permission: 'system:read',
      params: z.object({}),
      result: z.object({}),
      call: async () => ({}),
    });
    const b = defineMethod({
      name: 'dup',
      surface: 'extension',
      summary: '',
      permission: 'system:read',
      params: z.object({}),
      result: z.object({}),
      call: async () => ({}),
    });
    assert.throws(() => buildMethodTable([a, b]), /claimed by both/);
  });
  it('serves every standard operation under its v1.0 name, the seed name and (where v0.3 had it) the v0.3 name', () => {
    const t = buildMethodTable();
    for (const name of [
      'SendMessage',
      'SendStreamingMessage',
      'GetTask',
      'ListTasks',
      'CancelTask',
      'SubscribeToTask',
      'CreateTaskPushNotificationConfig',
      'GetTaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs',
      'DeleteTaskPushNotificationConfig',
      'GetExtendedAgentCard',
    ]) {
      assert.ok(t.v1.has(name), name);
    }
    for (const name of [
      'message/send',
      'message/stream',
      'tasks/get',
      'tasks/list',
      'tasks/cancel',
      'tasks/subscribe',
      'pushNotificationConfig/create',
      'pushNotificationConfig/get',
      'pushNotificationConfig/list',
      'pushNotificationConfig/delete',
      'getExtendedAgentCard',
    ]) {
      assert.ok(t.v1.has(name), name);
    }
    for (const name of [
      'message/send',
      'message/stream',
      'tasks/get',
      'tasks/cancel',
      'tasks/resubscribe',
      'tasks/pushNotificationConfig/set',
      'tasks/pushNotificationConfig/get',
      'tasks/pushNotificationConfig/list',
      'tasks/pushNotificationConfig/delete',
      'agent/getAuthenticatedExtendedCard',
    ]) {
      assert.ok(t.v03.has(name), name);
    }
  });
  it('gives every method a params and a result schema that export as JSON Schema', () => {
    for (const m of METHODS) {
      assert.ok(z.toJSONSchema(m.params, { io: 'input', unrepresentable: 'any' }), m.name);
      assert.ok(z.toJSONSchema(m.result, { unrepresentable: 'any' }), m.name);
      assert.ok(m.summary.length > 10, `${m.name} has a summary`);
    }
  });
});

describe('error tables', () => {
  it('map every reason on every surface', () => {
    for (const r of ERROR_REASONS) {
      assert.equal(typeof A2A_CODES[r], 'number', r);
      assert.equal(typeof EXTENSION_CODES[r], 'number', r);
      assert.equal(typeof HTTP_STATUS[r], 'number', r);
    }
  });
  it('never leaks the text of an unexpected error', () => {
    const e = toErrorObject(new Error('SELECT * FROM secrets failed at /home/x'), 'extension', 'cid');
    assert.equal(e.code, -32603);
    assert.equal(e.message, 'Internal error');
    assert.doesNotMatch(JSON.stringify(e), /SELECT|home/);
    assert.equal((e.data as { correlationId: string }).correlationId, 'cid');
  });
  it('uses typed error details for A2A v1.0 and a flat object for extensions', () => {
    const err = new AppError('TASK_NOT_FOUND', 'Task x was not found', { details: { taskId: 'x' } });
    const v1 = toErrorObject(err, 'a2a-v1', 'c1');
    assert.equal(v1.code, -32001);
    assert.ok(Array.isArray(v1.data));
    const ext = toErrorObject(new AppError('ALREADY_EXISTS', 'dup'), 'extension', 'c2');
    assert.equal(ext.code, -32005);
    assert.equal((ext.data as { type: string }).type, 'DuplicateEntityError');
  });
});

describe('envelope', () => {
  it('accepts a well-formed request and flags each malformation', () => {
    assert.ok(checkEnvelope({ jsonrpc: '2.0', id: 1, method: 'X' }).ok);
    assert.ok(checkEnvelope({ jsonrpc: '2.0', method: 'X' }).ok, 'a notification');
    for (const bad of [
      null,
      1,
      'x',
      [],
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: 1, method: '' },
      { jsonrpc: '2.0', id: true, method: 'X' },
      { jsonrpc: '2.0', id: 1, method: 'X', params: 3 },
    ]) {
      assert.equal(checkEnvelope(bad).ok, false, JSON.stringify(bad));
    }
  });
});

describe('versions', () => {
  it('negotiates Major.Minor and refuses the rest', () => {
    assert.equal(parseVersion('1.0'), '1.0');
    assert.equal(parseVersion('1.0.3'), '1.0');
    assert.equal(parseVersion(' 0.3 '), '0.3');
    assert.equal(parseVersion(''), undefined);
    assert.equal(parseVersion(undefined), undefined);
    assert.throws(() => parseVersion('2.0'), /not supported/);
    assert.throws(() => parseVersion('banana'), /not supported/);
  });
});

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

describe('line framing', () => {
  it('splits lines across chunks and reports oversized ones without losing the next', () => {
    const lines: string[] = [];
    const over: number[] = [];
    const f = createLineFramer(
      (l) => lines.push(l),
      (n) => over.push(n),
      10,
    );
    f.push(Buffer.from('{"a":1}\n{"b"'));
    f.push(Buffer.from(':2}\r\n'));
    f.push(Buffer.from('xxxxxxxxxxxxxxxxxxxx'));
    f.push(Buffer.from('yyy\n{"c":3}\n'));
    f.push(Buffer.from('{"d":4}'));
    f.flush();
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}']);
    assert.equal(over.length, 1);
  });
});

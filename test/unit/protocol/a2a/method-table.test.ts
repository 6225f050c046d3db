import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { CONTRACTS } from '../../../../src/protocol/a2a/contracts/index.ts';
import { bindAll, buildMethodTable, METHODS } from '../../../../src/protocol/a2a/method-table.ts';
import { SYNC_ROWS } from '../../../../src/protocol/a2a/methods/sync.methods.ts';
import { defineContract } from '../../../../src/protocol/a2a/contract.ts';
import { bindUnary } from '../../../../src/protocol/a2a/method.ts';

describe('method table and contracts', () => {
  it('binds every contract exactly once, and nothing that is not a contract', () => {
    assert.ok(CONTRACTS.length >= 40, `the contracts are read (${CONTRACTS.length})`);
    assert.equal(METHODS.length, CONTRACTS.length);
    METHODS.forEach((m, i) => {
      const contract = Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'call'));
      assert.deepEqual(contract, CONTRACTS[i], `${m.name} is its contract plus a call`);
    });
  });
  it('stops the start when a family is left unbound, or bound twice', () => {
    const others = METHODS.filter((m) => !SYNC_ROWS.includes(m));
    assert.throws(() => bindAll([others]), /the contract of _cleveragents\/sync\/connect has no binding in methods\//);
    assert.throws(() => bindAll([METHODS, SYNC_ROWS]), /methods\/ binds _cleveragents\/sync\/connect twice/);
    assert.deepEqual(bindAll([METHODS]), METHODS);
  });
  it('stops the start when a binding has no contract', () => {
    const stray = bindUnary(
      defineContract({
        name: 'x/stray',
        surface: 'extension',
        summary: 'not a contract',
        permission: 'system:read',
        params: z.object({}),
        result: z.object({}),
      }),
      () => Promise.resolve({}),
    );
    assert.throws(() => bindAll([METHODS, [stray]]), /methods\/ binds 1 row\(s\) that no contract lists/);
  });
});

describe('method table', () => {
  it('refuses a name claimed twice', () => {
    const row = (name: string, aliases: string[] = []) =>
      bindUnary(
        defineContract({
          name,
          aliases,
          surface: 'extension',
          summary: '',
          permission: 'system:read',
          params: z.object({}),
          result: z.object({}),
        }),
        () => Promise.resolve({}),
      );
    const a = row('x/one', ['dup']);
    const b = row('dup');
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
    assert.ok(METHODS.length >= 40, `the table is read (${METHODS.length})`);
    for (const m of METHODS) {
      assert.equal(z.toJSONSchema(m.params, { io: 'input', unrepresentable: 'any' }).type, 'object', m.name);
      // A result that exports as `{}` (any value) is no contract: it names a type or the cases of a union.
      const result = z.toJSONSchema(m.result, { unrepresentable: 'any' });
      assert.ok(result.type === 'object' || Array.isArray(result.anyOf), `${m.name} result: ${JSON.stringify(result)}`);
      assert.ok(m.summary.length > 10, `${m.name} has a summary`);
    }
  });
});

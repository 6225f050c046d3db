/**
 * Permissions come from the method table (issue #8, defect 4): every row's permission is checked
 * against the caller's role in the namespace; a viewer cannot write; a foreign namespace looks
 * missing. And a plan's waiting approval answers only to the plan's owner (defect 3).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, makePrincipal, type Principal } from '../../../../src/application/index.ts';
import { isWrite, permissionLevel } from '../../../../src/domain/permissions.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';
import {
  A2AClient,
  A2AClientError,
  CONTRACTS,
  actionRegistry,
  getTask,
  planApprove,
  planExecute,
  planStatus,
  planUse,
  projectRegistry,
  resourceRegistry,
  sendMessage,
} from '../../../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../../../src/protocol/server/in-memory.transport.ts';
import { A2A_FORBIDDEN } from '../../../../src/protocol/jsonrpc/codes.ts';
import { initRepo } from '../../../support/git.ts';

const VIEWER: Principal = makePrincipal({ id: 'vera', roles: { team: 'viewer' } });
const STRANGER: Principal = makePrincipal({ id: 'mallory', roles: { mallory: 'owner' } });

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

describe('permissions from the method table', () => {
  let app: App;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-perm-'));
    app = await buildApp({
      dataDir: dir,
      inMemory: true,
      validateResults: true,
      card: { endpoint: 'memory://', auth: 'none' },
    });
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (principal: Principal, method: string, params: unknown = {}): Promise<RpcAnswer> => {
    const out = await app.dispatcher.dispatch(
      { jsonrpc: '2.0', id: 1, method, params },
      { principal, version: '1.0', signal: new AbortController().signal },
    );
    assert.equal(out.kind, 'response', `${method} answers at once when refused`);
    return (out as { response: RpcAnswer }).response;
  };
  const client = (principal: Principal): A2AClient =>
    new A2AClient(new InMemoryClientTransport(app.dispatcher, () => ({}), principal, '1.0'));

  it('a viewer gets FORBIDDEN on every write method of the table, and nothing changes', async () => {
    const writes = CONTRACTS.filter((m) => isWrite(m.permission));
    assert.ok(writes.length >= 15, `the table has write methods (${writes.length})`);
    for (const m of writes) {
      const r = await call(VIEWER, m.name, {});
      assert.ok(r.error, `${m.name} refused`);
      assert.equal(r.error.code, m.surface === 'extension' ? -32003 : A2A_FORBIDDEN, `${m.name}: ${r.error.message}`);
      assert.match(
        r.error.message,
        new RegExp(`needs permission ${m.permission}, and your role \\(viewer\\) does not grant it`),
      );
    }
    const sessions = await call(VIEWER, '_cleveragents/session/list', {});
    assert.deepEqual((sessions.result as { sessions: unknown[] }).sessions, [], 'no refused write created a session');
    assert.deepEqual(((await call(VIEWER, 'ListTasks', {})).result as { tasks: unknown[] }).tasks, [], 'or a task');
  });

  it("a viewer passes authorization on every read method (not the administrators' ones)", async () => {
    const reads = CONTRACTS.filter((m) => !isWrite(m.permission) && permissionLevel(m.permission) !== 'server');
    assert.ok(reads.length >= 15, `the table has read methods (${reads.length})`);
    for (const m of reads) {
      const r = await call(VIEWER, m.name, {});
      assert.notEqual(r.error?.code, -32003, `${m.name}: ${r.error?.message}`);
      assert.notEqual(r.error?.code, A2A_FORBIDDEN, `${m.name}: ${r.error?.message}`);
    }
    // and they work
    assert.ok(
      ((await call(VIEWER, '_cleveragents/registry/actors/list', {})).result as { items: unknown[] }).items.length >= 2,
    );
    assert.deepEqual(((await call(VIEWER, '_cleveragents/plan/list', {})).result as { plans: unknown[] }).plans, []);
    assert.deepEqual(((await call(VIEWER, 'ListTasks', {})).result as { tasks: unknown[] }).tasks, []);
  });

  it('the local user holds every permission in local/', async () => {
    const r = await call(LOCAL_PRINCIPAL, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    assert.ok(r.result, JSON.stringify(r.error));
    const tenant = await call(LOCAL_PRINCIPAL, 'SendMessage', {
      tenant: 'local',
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    assert.ok(tenant.result, JSON.stringify(tenant.error));
  });

  it('a foreign namespace (tenant) looks like a missing one', async () => {
    const foreign = await call(LOCAL_PRINCIPAL, 'SendMessage', {
      tenant: 'team',
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    const missing = await call(LOCAL_PRINCIPAL, 'SendMessage', {
      tenant: 'no-such-ns',
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    assert.equal(foreign.error?.code, -32001);
    assert.equal(foreign.error?.message, 'Namespace team was not found');
    assert.equal(missing.error?.message, 'Namespace no-such-ns was not found');
    // a viewer of team reads there, but may not write there
    assert.ok((await call(VIEWER, 'ListTasks', { tenant: 'team' })).result);
    assert.equal(
      (
        await call(VIEWER, 'SendMessage', {
          tenant: 'team',
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] },
        })
      ).error?.code,
      A2A_FORBIDDEN,
    );
    // registry entities of a foreign namespace stay invisible
    const shown = await call(VIEWER, '_cleveragents/registry/actors/show', { name: 'local/whatever' });
    assert.equal(shown.error?.code, -32001);
  });

  it("a plan's waiting approval answers only to its owner", async () => {
    const owner = client(LOCAL_PRINCIPAL);
    const other = client(STRANGER);
    const repo = join(dir, 'repo');
    initRepo(repo, { 'a.txt': 'one\n' });
    await owner.call(resourceRegistry.add, {
      definition: { name: 'local/perm-repo', type: 'git-checkout', path: repo, branch: 'main' },
    });
    await owner.call(projectRegistry.add, {
      definition: { name: 'local/perm-project', resources: ['local/perm-repo'] },
    });
    await owner.call(actionRegistry.add, {
      definition: {
        name: 'local/perm-write',
        descriptionTemplate: 'write',
        definitionOfDone: 'written',
        steps: [{ id: 'w', tool: 'builtin/write-file', args: { path: 'a.txt', content: 'two\n' } }],
      },
    });
    const used = await owner.call(planUse, {
      action: 'local/perm-write',
      projects: ['local/perm-project'],
      automationProfile: 'manual',
    });
    const ex = await owner.call(planExecute, { planId: used.plan.planId, wait: true });
    assert.equal(ex.task?.status.state, 'TASK_STATE_INPUT_REQUIRED');
    // Another principal — even an owner of its own local/ — sees neither the task nor the plan.
    await assert.rejects(
      other.call(sendMessage, {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          taskId: ex.taskId,
          parts: [{ data: { approval: { decision: 'approve' } } }],
        },
      }),
      (e: unknown) => e instanceof A2AClientError && e.code === -32001,
    );
    await assert.rejects(
      other.call(planApprove, { planId: used.plan.planId }),
      (e: unknown) => e instanceof A2AClientError && e.code === -32001 && /Plan .* was not found/.test(e.message),
    );
    const st = await owner.call(planStatus, { planId: used.plan.planId });
    assert.equal((st['waiting'] as { taskId: string }).taskId, ex.taskId, 'still waiting');
    assert.equal((await owner.call(getTask, { id: ex.taskId })).status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(readFileSync(join(repo, 'a.txt'), 'utf8'), 'one\n');
    const approved = await owner.call(planApprove, { planId: used.plan.planId });
    assert.equal(approved.task?.status.state, 'TASK_STATE_COMPLETED');
  });
});

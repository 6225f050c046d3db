/**
 * Contract cases of a namespace's secrets, over every transport: set (new, then replaced), listed
 * by name and never by value, removed; the refusals (a missing namespace, a missing secret, an
 * empty or oversized value — whose messages never quote it); and an LLM actor whose key is a
 * secret (`apiKeySecret`) sending it to the fake provider.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import {
  A2AClient,
  secretList,
  secretRemove,
  secretSet,
  sessionCreate,
  SECRET_VALUE_MAX_BYTES,
} from '../../src/protocol/client/index.ts';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { rpcError } from './a2a.suite.ts';
import { addActor, statusText, streamTurn } from './llm.suite.ts';
import type { SuiteContext } from './suite-context.ts';

const VALUE = 'sk-contract-secret-5f2a9c';

export function secretSuite(ctx: SuiteContext): void {
  let client: A2AClient;
  let llm: FakeLlm;
  // Over HTTP the caller is the administrator (behind the server token), an owner of local/ too.
  const me = (): string => (ctx.harness().name === 'http' ? 'admin' : 'local');

  before(async () => {
    client = ctx.harness().client;
    llm = await startFakeOpenAI({ expectKey: VALUE });
  });
  after(() => llm?.close());

  it('sets a secret (then a new value of it), lists it by name only, and removes it', async () => {
    const set = await client.call(secretSet, { name: 'contract-key', value: `${VALUE}-old\n` });
    assert.deepEqual([set.namespace, set.name, set.created], ['local', 'contract-key', true]);
    assert.ok(!JSON.stringify(set).includes(VALUE));
    const again = await client.call(secretSet, { namespace: 'local', name: 'contract-key', value: VALUE });
    assert.equal(again.created, false);
    const listed = await client.call(secretList, {});
    assert.equal(listed.namespace, 'local');
    const row = listed.secrets.find((s) => s.name === 'contract-key');
    assert.ok(row, JSON.stringify(listed));
    assert.equal(row.createdBy, me());
    assert.deepEqual(Object.keys(row).sort(), ['createdAt', 'createdBy', 'name', 'updatedAt']);
    assert.ok(!JSON.stringify(listed).includes(VALUE), 'no value in the list');
    await client.call(secretSet, { name: 'contract-gone', value: 'x' });
    const removed = await client.call(secretRemove, { name: 'contract-gone' });
    assert.deepEqual(removed, { namespace: 'local', name: 'contract-gone', removed: true });
    const missing = await rpcError(
      client.call(secretRemove, { name: 'contract-gone' }),
      -32001,
      'ResourceNotFoundError',
    );
    assert.equal(missing.message, 'There is no secret contract-gone in namespace local');
    ctx.record('secret set/list/remove', {
      set: { ...set, updatedAt: '' },
      again: again.created,
      listed: listed.secrets.map((s) => s.name).filter((n) => n.startsWith('contract-')),
      removed,
      missing: missing.message,
    });
  });

  it('refuses a secret in a namespace it cannot see, a bad name, and an empty or oversized value — never quoting it', async () => {
    const nowhere = await rpcError(client.call(secretList, { namespace: 'nowhere' }), -32001, 'ResourceNotFoundError');
    assert.equal(nowhere.message, 'Namespace nowhere was not found');
    await rpcError(
      client.call(secretSet, { namespace: 'nowhere', name: 'k', value: VALUE }),
      -32001,
      'ResourceNotFoundError',
    );
    const builtin = await rpcError(
      client.call(secretSet, { namespace: 'builtin', name: 'k', value: VALUE }),
      -32003,
      'AuthorizationError',
    );
    const badName = await rpcError(
      client.call(secretSet, { name: 'no/slashes', value: VALUE }),
      -32602,
      'ValidationError',
    );
    assert.deepEqual(
      badName.fieldViolations.map((f) => f.field),
      ['name'],
    );
    const big = `${VALUE}${'x'.repeat(SECRET_VALUE_MAX_BYTES)}`;
    const problems: string[] = [];
    for (const value of ['', '\n', big, `${'é'.repeat(SECRET_VALUE_MAX_BYTES / 2)}z`]) {
      const err = await rpcError(client.call(secretSet, { name: 'k', value }), -32602, 'ValidationError');
      assert.deepEqual(
        err.fieldViolations.map((f) => f.field),
        ['value'],
      );
      const shown = JSON.stringify({ message: err.message, data: err.data });
      assert.ok(!shown.includes(VALUE) && !shown.includes('xxxx') && !shown.includes('éé'), shown);
      problems.push(err.message);
    }
    ctx.record('secret refusals', { nowhere: nowhere.message, builtin: builtin.message, problems });
  });

  it('an actor with apiKeySecret sends the secret as its key (and says where the key came from)', async () => {
    await client.call(secretSet, { name: 'contract-llm', value: `${VALUE}\n` });
    await addActor(client, {
      name: 'local/secret-gpt',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: llm.url,
      apiKeySecret: 'contract-llm',
    });
    llm.push({ text: ['keyed'] });
    const session = await client.call(sessionCreate, { actor: 'local/secret-gpt' });
    const turn = await streamTurn(client, 'hi', { contextId: session.id });
    assert.equal(turn.task.status.state, 'TASK_STATE_COMPLETED', statusText(turn.task));
    assert.equal(turn.chunks.join(''), 'keyed');
    assert.equal(llm.generations.at(-1)?.headers['authorization'], `Bearer ${VALUE}`);
    assert.ok(!JSON.stringify(turn).includes(VALUE), 'the key is in no event or task');

    // Removed: the next turn fails, naming the secret and how to set it.
    await client.call(secretRemove, { name: 'contract-llm' });
    const failed = await streamTurn(client, 'again', { contextId: session.id });
    assert.equal(failed.task.status.state, 'TASK_STATE_FAILED');
    assert.match(
      statusText(failed.task),
      /^No API key for local\/secret-gpt: namespace local has no secret contract-llm \(set it: agents secret set contract-llm --namespace local\)/,
    );
    ctx.record('secret actor', { chunks: turn.chunks, failed: statusText(failed.task) });
  });
}

/**
 * `session/context` through the real agent and the fake OpenAI-compatible server: the preview of a
 * project-bound session's next turn sends nothing to the model, and what it counts is what the next
 * turn then sends — the earlier turns' messages, the tools, the project's instruction file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  projectRegistry,
  resourceRegistry,
  sessionContext,
  sessionCreate,
  type A2AClient,
} from '../../../../src/protocol/client/index.ts';
import { startFakeOpenAI, type FakeLlm } from '../../../support/fake-llm.ts';
import { initRepo } from '../../../support/git.ts';
import { startHarness, type Harness } from '../../../support/harness.ts';
import { addActor, LLM_TEST_KEY, statusText, streamTurn } from '../../../contract/llm.suite.ts';

process.env['LLM_TEST_KEY'] = LLM_TEST_KEY;

type Body = { messages: Array<{ role: string; content?: unknown }>; tools?: unknown[] };

describe("the preview of a session's next turn", () => {
  let h: Harness;
  let client: A2AClient;
  let fake: FakeLlm;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'ca-session-context-'));
    const repo = join(work, 'shop');
    initRepo(repo, {
      'AGENTS.md': 'Always answer in cents, never in dollars.\n',
      'src/invoice.ts': 'export function invoiceTotal(lines: number[]): number {\n  return lines.length;\n}\n',
      'src/rounding.ts': 'export function roundCents(n: number): number {\n  return Math.round(n);\n}\n',
    });
    h = await startHarness('memory');
    client = h.client;
    fake = await startFakeOpenAI({ expectKey: LLM_TEST_KEY });
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/shop-repo', type: 'git-checkout', path: repo, branch: 'main' },
    });
    await client.call(projectRegistry.add, { definition: { name: 'local/shop', resources: ['local/shop-repo'] } });
    await addActor(client, {
      name: 'local/coder',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'LLM_TEST_KEY',
      maxRetries: 0,
      contextWindow: 32000,
      maxTokens: 500,
      systemPrompt: 'You are a careful coder.',
    });
  });
  after(async () => {
    await h?.close();
    await fake?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('sends nothing, and counts what the next turn sends: its history, tools and project files', async () => {
    const s = await client.call(sessionCreate, { actor: 'local/coder', project: 'local/shop' });
    for (const q of ['first question', 'second question']) {
      fake.push({ text: [`answer to ${q}`], usage: { input: 10, output: 5 } });
      const turn = await streamTurn(client, q, { contextId: s.id });
      assert.equal(turn.task.status.state, 'TASK_STATE_COMPLETED', statusText(turn.task));
    }
    const sent = fake.generations.length;
    const p = await client.call(sessionContext, { sessionId: s.id, message: 'fix the invoice rounding' });
    assert.equal(fake.generations.length, sent, 'the preview sent nothing to the model');

    assert.deepEqual(p.model, {
      provider: 'openai-compatible',
      model: 'fake-model',
      contextWindow: 32000,
      reserve: 500,
    });
    assert.deepEqual(
      [p.history.turns, p.history.kept, p.history.dropped, p.history.messages, p.history.compactionDue],
      [2, 2, 0, 4, 0],
    );
    assert.equal(p.project?.name, 'local/shop');
    assert.equal(p.project?.mode, 'map');
    assert.ok((p.project?.tokens ?? 0) > 0, 'the project gives the turn its instruction file and map');
    assert.ok(p.system.instructions > 0 && p.system.project > 0);
    assert.ok(p.tools.length > 0, 'a project-bound chat has the coding tools');
    assert.ok(p.totals.tokens >= p.system.tokens + p.toolTokens + p.history.tokens);

    // The next turn, sent: the model receives what the preview counted.
    fake.push({ text: ['done'], usage: { input: 10, output: 5 } });
    await streamTurn(client, 'fix the invoice rounding', { contextId: s.id });
    const body = fake.generations[sent]?.body as Body;
    const system = body.messages.find((m) => m.role === 'system');
    const others = body.messages.filter((m) => m.role !== 'system');
    assert.equal(others.length, p.history.messages + 1, 'the earlier turns kept, and the new message');
    assert.equal(body.tools?.length, p.tools.length);
    assert.match(JSON.stringify(system?.content), /You are a careful coder/);
    assert.match(JSON.stringify(system?.content), /Always answer in cents/);
    assert.match(JSON.stringify(system?.content), /invoice\.ts/);
  });
});

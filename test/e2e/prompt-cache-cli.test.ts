/**
 * End to end: a chat turn with an Anthropic actor through the built `agents` CLI, against the fake
 * Anthropic server — every model step of the turn marks the prompt-cache breakpoints Anthropic
 * reads (the last tool, the system prompt, the stable head of the history; never more than 4), and
 * the turn's cost charges the cache reads and writes the server reports at Anthropic's rates.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli } from '../support/cli.ts';
import { cacheBreakpoints, startFakeAnthropic, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-prompt-cache-e2e');
const KEY = 'sk-ant-cache-e2e-0123456789';
const DATA = join(ROOT, 'data');
const cli = agentsCli({
  dataDir: DATA,
  configHome: join(ROOT, 'no-config'),
  env: { CACHE_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' },
  timeoutMs: 60_000,
});

let fake: FakeLlm;

before(async () => {
  fake = await startFakeAnthropic({ expectKey: KEY });
  const repo = join(ROOT, 'repo');
  initRepo(repo, { 'notes.txt': 'the answer is 42\n' });
  const actor = join(ROOT, 'claude.yaml');
  writeFileSync(
    actor,
    `name: local/claude\nprovider: anthropic\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: CACHE_E2E_KEY\ntools: [builtin/read-file]\nprices: { inputPerMillion: 3, outputPerMillion: 15 }\n`,
  );
  for (const args of [
    ['actor', 'add', '--config', actor],
    ['resource', 'add', 'git-checkout', 'local/notes', '--path', repo],
    ['project', 'create', 'local/notes', '--resource', 'local/notes'],
  ]) {
    const res = await cli.run(args);
    assert.equal(res.code, 0, res.stderr);
  }
});

after(async () => {
  await fake?.close();
});

describe('Anthropic prompt caching in a chat turn', () => {
  it('each step marks the tools, the system prompt and the history; the cost counts cache reads and writes', async () => {
    fake.push(
      {
        toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }],
        usage: { input: 1000, output: 5, cacheWrite: 900 },
      },
      { text: ['It says 42.'], usage: { input: 1100, output: 4, cacheRead: 900, cacheWrite: 100 } },
    );
    const data = await cli.ok(['send', '--actor', 'local/claude', '--project', 'notes', 'what is in notes.txt?']);
    assert.equal(data.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(data.task.status));
    const steps = fake.generations.slice(-2);
    assert.equal(steps.length, 2);
    for (const [i, step] of steps.entries()) {
      const body = step.body as { tools: unknown[]; messages: unknown[] };
      const marks = cacheBreakpoints(body);
      assert.ok(marks.length <= 4, `step ${i}: ${marks.join(', ')}`);
      assert.equal(marks[0], `tools[${body.tools.length - 1}]`, `step ${i}: the last tool`);
      assert.equal(marks[1], 'system[0]', `step ${i}: the system prompt`);
      assert.ok(
        marks.slice(2).some((m) => m.startsWith('messages[')),
        `step ${i}: the history is marked: ${marks.join(', ')}`,
      );
    }
    // 2100 input: 900 read at 0.30, 1000 written at 3.75, 200 at 3; 9 output at 15 (per million).
    assert.deepEqual(data.task.metadata.usage.cost, { amount: 0.004755, currency: 'USD' });
    assert.equal(data.task.metadata.usage.inputTokens, 2100);
  });
});

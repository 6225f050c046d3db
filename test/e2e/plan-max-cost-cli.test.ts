/**
 * End to end: `--max-cost` through the built `agents` CLI. A cost budget counts a plan's model
 * tokens at its actors' prices; on a plan whose actor (or a fallback of it) has none it could never
 * fire, so `plan use` and `plan execute` refuse it at once, naming the actor and how to set prices,
 * before any model is asked. The LLM actors are behind the fake OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, type CliResult } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm, type FakeReply, type RecordedRequest } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-max-cost-e2e');
const KEY = 'sk-max-cost-e2e-0123456789';
const DATA = join(ROOT, 'data');
const cli = agentsCli({
  dataDir: DATA,
  configHome: join(ROOT, 'no-config'),
  env: { MAX_COST_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' },
  timeoutMs: 60_000,
});
const GOAL = 'say hello in the README';

let fake: FakeLlm;

async function refused(args: string[]): Promise<CliResult> {
  const res = await cli.run(args);
  assert.notEqual(res.code, 0, `agents ${args.join(' ')} should be refused:\n${res.stdout}`);
  return res;
}

const actor = async (name: string, extra = ''): Promise<void> => {
  const path = join(ROOT, `${name}.yaml`);
  writeFileSync(
    path,
    `name: local/${name}\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: MAX_COST_E2E_KEY\n${extra}`,
  );
  await cli.run(['actor', 'add', '--config', path], { code: 0 });
};

/** A strategy with one decision, at once (the plan only has to get past strategize). */
function strategy(req: RecordedRequest): FakeReply {
  const tools = ((req.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map(
    (t) => t.function.name,
  );
  assert.ok(tools.includes('submit_strategy'), `a strategy step: ${tools.join(', ')}`);
  const args = {
    approach: 'append a greeting to README.md',
    rationale: 'the goal asks for it',
    confidence: 0.9,
    alternatives: [{ option: 'a new file', reason: 'the goal names the README' }],
    decisions: [
      {
        question: 'Where does the greeting go?',
        chosen: 'the end of README.md',
        alternatives: [{ option: 'the top', reason: 'the title stays first' }],
        confidence: 0.9,
        rationale: 'appending keeps the title',
      },
    ],
  };
  return {
    toolCalls: [{ id: 'call_s', name: 'submit_strategy', arguments: JSON.stringify(args) }],
    usage: { input: 50, output: 20 },
  };
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  fake.reply(strategy);
  initRepo(join(ROOT, 'repo'), { 'README.md': '# hi\n' });
  const prices = 'prices: { inputPerMillion: 1, outputPerMillion: 4 }\n';
  await actor('free');
  await actor('priced', prices);
  await actor('priced-with-free-fallback', `${prices}fallbacks: [local/free]\n`);
  await cli.run(['resource', 'add', 'git-checkout', 'local/repo', '--path', join(ROOT, 'repo')], { code: 0 });
  const project = join(ROOT, 'project.yaml');
  writeFileSync(project, 'name: local/repo\nresources: [local/repo]\n');
  await cli.run(['project', 'add', '--config', project], { code: 0 });
});

after(async () => {
  await fake?.close();
});

describe('--max-cost on a plan whose model has no prices', () => {
  it('plan use refuses it at once, naming the actor and how to give it prices; no model is asked, no plan made', async () => {
    const res = await refused([
      'plan',
      'use',
      '--goal',
      GOAL,
      'local/repo',
      '--actor',
      'local/free',
      '--max-cost',
      '0.50',
    ]);
    assert.match(
      res.stderr,
      /A cost budget \(--max-cost 0\.5\) needs prices, and actor local\/free \(the strategy actor and the execution actor\) has none/,
    );
    assert.match(res.stderr, /agents actor update local\/free --config FILE/);
    assert.match(res.stderr, /prices: \{ inputPerMillion: N, outputPerMillion: N \}/);
    assert.equal(fake.generations.length, 0, 'no model was asked');
    assert.deepEqual((await cli.ok(['plan', 'list'])).plans, []);
  });

  it('names the execution actor when only it has no prices, and a fallback without prices', async () => {
    const split = await refused([
      'plan',
      'use',
      '--goal',
      GOAL,
      'local/repo',
      '--strategy-actor',
      'local/priced',
      '--execution-actor',
      'local/free',
      '--max-cost',
      '1',
    ]);
    assert.match(split.stderr, /actor local\/free \(the execution actor\) has none/);
    const fallback = await refused([
      'plan',
      'use',
      '--goal',
      GOAL,
      'local/repo',
      '--actor',
      'local/priced-with-free-fallback',
      '--max-cost',
      '1',
    ]);
    assert.match(fallback.stderr, /actor local\/free \(a fallback of local\/priced-with-free-fallback\) has none/);
    assert.equal(fake.generations.length, 0, 'no model was asked');
  });

  it('plan execute refuses a --max-cost for such a plan and leaves it as it was; with prices the budget is kept', async () => {
    const made = await cli.ok(['plan', 'use', '--goal', GOAL, 'local/repo', '--actor', 'local/free']);
    const id = made.plan.planId as string;
    const before = await cli.ok(['plan', 'status', id]);
    assert.equal(before.state, 'complete', JSON.stringify(before));
    const asked = fake.generations.length;
    const res = await refused(['plan', 'execute', id, '--max-cost', '2']);
    assert.match(res.stderr, /actor local\/free \(the strategy actor and the execution actor\) has none/);
    const afterRefusal = await cli.ok(['plan', 'status', id]);
    assert.equal(afterRefusal.phase, before.phase);
    assert.equal(afterRefusal.state, before.state);
    assert.equal(afterRefusal.budget.maxCost, undefined);
    assert.equal(fake.generations.length, asked, 'no model was asked');

    const priced = await cli.ok([
      'plan',
      'use',
      '--goal',
      GOAL,
      'local/repo',
      '--actor',
      'local/priced',
      '--max-cost',
      '0.25',
    ]);
    assert.equal(priced.plan.budget.maxCost, 0.25);
  });
});

/**
 * End to end: a plan from a goal through the built `agents` CLI on a real git repository — the
 * strategy and execution actors are LLM actors behind the fake OpenAI-compatible server (real
 * HTTP, streamed as the real API streams), scripted per test: the script reads what the agent sends
 * (the tools offered, the system prompt, the guidance) and answers as a model would.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm, type FakeReply, type RecordedRequest } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-goal-e2e');
const KEY = 'sk-goal-e2e-0123456789abcdef';
const DATA = join(ROOT, 'data');
const cli = agentsCli({
  dataDir: DATA,
  configHome: join(ROOT, 'no-config'),
  env: { GOAL_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' },
  timeoutMs: 60_000,
});

const BUGGY =
  "exports.parseDate = (s) => {\n  const [y, m, d] = s.split('-').map(Number);\n  return new Date(y, m, d);\n};\n";
const TEST =
  "const { parseDate } = require('./src/date.js');\nconst d = parseDate('2024-03-05');\nif (d.getMonth() !== 2) {\n  console.error('parseDate: month ' + d.getMonth() + ', expected 2');\n  process.exit(1);\n}\nconsole.log('ok');\n";

let fake: FakeLlm;
let repo: string;
let git: (...args: string[]) => string;

const file = (name: string, text: string): string => {
  const p = join(ROOT, name);
  writeFileSync(p, text);
  return p;
};

// ---- the scripted model -------------------------------------------------------------------------

interface OpenAiBody {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown[] }>;
}

const bodyOf = (req: RecordedRequest): OpenAiBody => req.body as OpenAiBody;
const toolNames = (req: RecordedRequest): string[] => (bodyOf(req).tools ?? []).map((t) => t.function.name);
const allText = (req: RecordedRequest): string => JSON.stringify(bodyOf(req).messages);
/** Tool results the conversation has so far (how far the model got). */
const toolTurns = (req: RecordedRequest): number => bodyOf(req).messages.filter((m) => m.role === 'tool').length;
const call = (name: string, args: unknown, id = `call_${Math.random().toString(36).slice(2, 10)}`): FakeReply => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
  usage: { input: 120, output: 30 },
});

/** A strategy with two decisions and their alternatives; guidance about Date.UTC changes the second. */
function strategy(req: RecordedRequest): FakeReply {
  const guided = /Date\.UTC/.test(allText(req));
  if (toolTurns(req) === 0 && !guided) return call('builtin__read', { path: 'src/date.js' });
  // A re-plan is asked for the decisions from the corrected one on: only the second.
  const replan = /Decide again from the corrected decision on/.test(allText(req));
  const second = guided
    ? {
        question: 'How to build the date?',
        chosen: 'build it with Date.UTC(y, m - 1, d)',
        alternatives: [{ option: 'new Date(y, m - 1, d)', reason: 'the user asked for Date.UTC' }],
        confidence: 0.8,
        rationale: 'The correction asks for UTC dates.',
      }
    : {
        question: 'How to build the date?',
        chosen: 'subtract one from the month: new Date(y, m - 1, d)',
        alternatives: [{ option: 'Date.UTC(y, m - 1, d)', reason: 'changes the time zone of the result' }],
        confidence: 0.9,
        rationale: 'JavaScript months start at 0; the parser passes the calendar month.',
      };
  return call('submit_strategy', {
    approach: 'fix the month offset in src/date.js and check it with the test',
    rationale: 'the test fails because the month is off by one',
    confidence: 0.85,
    alternatives: [{ option: 'rewrite the parser with a library', reason: 'too large for a one-line bug' }],
    decisions: [...(replan ? [] : [first]), second],
  });
}

const first = {
  question: 'Which file holds the bug?',
  chosen: 'src/date.js',
  alternatives: [{ option: 'test.js', reason: 'the test states the right expectation' }],
  confidence: 0.95,
  rationale: 'parseDate is defined there and builds the Date.',
};

/** The execution: read the file, edit it as the strategy says, finish. */
function execution(req: RecordedRequest): FakeReply {
  const finish = toolNames(req).find((n) => /finish/.test(n)) ?? 'finish';
  const utc = /Date\.UTC/.test(allText(req));
  switch (toolTurns(req)) {
    case 0:
      return call('builtin__read', { path: 'src/date.js' });
    case 1:
      return call('builtin__edit', {
        path: 'src/date.js',
        edits: [
          { oldText: 'new Date(y, m, d)', newText: utc ? 'new Date(Date.UTC(y, m - 1, d))' : 'new Date(y, m - 1, d)' },
        ],
      });
    default:
      return call(finish, { done: true, assessment: 'the month is zero-based now', confidence: 0.9 });
  }
}

/** `sloppy-model` never follows the strategy schema; `wrong-fix` edits the wrong thing. */
function scripted(req: RecordedRequest): FakeReply {
  const names = toolNames(req);
  const model = (req.body as { model?: string }).model;
  if (model === 'sloppy-model') return call('submit_strategy', { approach: 'just do it' });
  if (model === 'wrong-fix' && !names.includes('submit_strategy') && toolTurns(req) === 1)
    return call('builtin__edit', {
      path: 'src/date.js',
      edits: [{ oldText: 'new Date(y, m, d)', newText: 'new Date(y, m + 1, d)' }],
    });
  if (names.includes('submit_strategy')) return strategy(req);
  return execution(req);
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  fake.reply(scripted);
  repo = join(ROOT, 'repo');
  git = initRepo(repo, { 'src/date.js': BUGGY, 'test.js': TEST, 'README.md': '# dates\n' });
  const actor = file(
    'gpt.yaml',
    `name: local/gpt\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: GOAL_E2E_KEY\nprices: { inputPerMillion: 1, outputPerMillion: 4 }\n`,
  );
  await cli.run(['actor', 'add', '--config', actor], { code: 0 });
  for (const model of ['sloppy-model', 'wrong-fix'])
    await cli.run(
      [
        'actor',
        'add',
        '--config',
        file(
          `${model}.yaml`,
          `name: local/${model}\nprovider: openai-compatible\nmodel: ${model}\nbaseUrl: ${fake.url}\napiKeyEnv: GOAL_E2E_KEY\n`,
        ),
      ],
      { code: 0 },
    );
  await cli.run(['resource', 'add', 'git-checkout', 'local/api', '--path', repo], { code: 0 });
  const project = file(
    'api.project.yaml',
    `name: local/api\nresources: [local/api]\nsettings:\n  invariants: ["Keep the public API of parseDate"]\n  verify: { command: "${process.execPath} test.js", timeoutSeconds: 60 }\n`,
  );
  await cli.run(['project', 'add', '--config', project], { code: 0 });
});

after(async () => {
  await fake?.close();
});

describe('a plan from a goal (local mode)', () => {
  let planId = '';

  it('plan use without an actor says how to choose one', async () => {
    const res = await cli.run(['plan', 'use', '--goal', 'fix the failing date parsing test', 'local/api']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /needs a strategy actor and an execution actor/);
    assert.match(res.stderr, /--actor NAME/);
  });

  it('plan use --goal strategizes: the tree and explain show the rationale, the alternatives and the context', async () => {
    const res = await cli.run(
      ['plan', 'use', '--goal', 'fix the failing date parsing test', 'local/api', '--actor', 'local/gpt'],
      { code: 0 },
    );
    planId = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    assert.ok(planId, res.stdout);
    assert.match(res.stdout, /^decision: 1 \S+ Which file holds the bug\? → src\/date\.js$/m);
    assert.match(res.stdout, /^decision: 2 \S+ How to build the date\? → subtract one from the month/m);
    const system = JSON.stringify(bodyOf(fake.generations.at(-1) as RecordedRequest).messages[0]);
    assert.match(system, /Keep the public API of parseDate/, 'the invariant is given to the strategy actor');
    assert.match(system, /test\.js/, 'the verify command is named');

    const tree = await cli.ok(['plan', 'tree', planId]);
    const root = tree.decisions[0];
    assert.equal(root.type, 'strategy');
    assert.equal(root.chosen, 'fix the month offset in src/date.js and check it with the test');
    assert.deepEqual(
      root.children.map((d: any) => [d.type, d.question, d.confidence]),
      [
        ['choice', 'Which file holds the bug?', 0.95],
        ['choice', 'How to build the date?', 0.9],
      ],
    );
    const second = root.children[1];
    const explained = await cli.run(['plan', 'explain', second.id, '--show-context'], { code: 0 });
    assert.match(explained.stdout, /^rationale: JavaScript months start at 0/m);
    assert.match(explained.stdout, /^alternative 1: Date\.UTC\(y, m - 1, d\) — not chosen: changes the time zone/m);
    assert.match(explained.stdout, /^context seen: snapshot \w+: \d+ files of project local\/api/m);
    assert.match(explained.stdout, /^context file: src\/date\.js \(local\/api, \d+ tokens, score/m);

    const status = await cli.ok(['plan', 'status', planId]);
    assert.equal(status.phase, 'strategize');
    assert.equal(status.state, 'complete');
    assert.deepEqual(status.actors, {
      strategy: 'local/gpt',
      execution: 'local/gpt',
      source: { strategy: '--actor', execution: '--actor' },
    });
    assert.ok(status.usage.tokens > 0, 'the strategy actor used tokens');
  });

  it('execute carries the strategy out in the sandbox, verify decides the definition of done, apply lands it', async () => {
    const res = await cli.run(['plan', 'execute', planId], { code: 0 });
    assert.match(res.stdout + res.stderr, /builtin\/edit/);
    const status = await cli.ok(['plan', 'status', planId]);
    assert.equal(status.phase, 'execute');
    assert.equal(status.state, 'complete');
    assert.equal(status.done.met, true);
    assert.equal(status.done.by, 'verify');
    assert.equal(status.done.verify.exitCode, 0);
    const diff = await cli.run(['plan', 'diff', planId], { code: 0 });
    assert.match(diff.stdout, /^\+ {2}return new Date\(y, m - 1, d\);$/m);
    assert.equal(readFileSync(join(repo, 'src/date.js'), 'utf8'), BUGGY, 'nothing changed in the project before apply');
    await cli.run(['plan', 'apply', planId, '--yes'], { code: 0 });
    assert.match(readFileSync(join(repo, 'src/date.js'), 'utf8'), /new Date\(y, m - 1, d\)/);
    git('reset', '--hard', 'HEAD~1');
  });

  it('a revert correction gives the guidance to the strategy actor: new decisions, and a different edit', async () => {
    const res = await cli.run(
      ['plan', 'use', '--goal', 'fix the failing date parsing test', 'local/api', '--actor', 'local/gpt'],
      { code: 0 },
    );
    const id = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    await cli.run(['plan', 'execute', id], { code: 0 });
    const before = await cli.ok(['plan', 'tree', id]);
    const second = before.decisions[0].children[1];
    const corrected = await cli.ok([
      'plan',
      'correct',
      second.id,
      '--mode',
      'revert',
      '--guidance',
      'build the date with Date.UTC instead',
    ]);
    assert.ok(corrected.superseded.includes(second.id));
    const tree = await cli.ok(['plan', 'tree', id]);
    const choices = tree.decisions[0].children.filter((d: any) => d.type === 'choice');
    assert.deepEqual(
      choices.map((d: any) => d.chosen),
      ['src/date.js', 'build it with Date.UTC(y, m - 1, d)'],
    );
    const status = await cli.ok(['plan', 'status', id]);
    assert.equal(status.phase, 'execute');
    assert.equal(status.state, 'queued');
    await cli.run(['plan', 'execute', id], { code: 0 });
    const diff = await cli.run(['plan', 'diff', id], { code: 0 });
    assert.match(diff.stdout, /^\+ {2}return new Date\(Date\.UTC\(y, m - 1, d\)\);$/m);
    assert.doesNotMatch(diff.stdout, /^\+ {2}return new Date\(y, m - 1, d\);$/m);
  });

  it('a stepped action says plainly that guidance cannot change its fixed steps', async () => {
    const res = await cli.run(
      [
        'plan',
        'use',
        'builtin/replace',
        'local/api',
        '--arg',
        'pattern=dates',
        '--arg',
        'replacement=days',
        '--arg',
        'glob=README.md',
      ],
      { code: 0 },
    );
    const id = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    const tree = await cli.ok(['plan', 'tree', id]);
    const step = tree.decisions[0].children[0];
    const c = await cli.ok(['plan', 'correct', step.id, '--mode', 'append', '--guidance', 'only the title']);
    assert.match(c.note, /cannot change fixed steps/);
  });

  it('a strategy off the schema is asked for again, then the plan errors with a hint', async () => {
    const before = fake.generations.length;
    const res = await cli.run(['plan', 'use', '--goal', 'fix it', 'local/api', '--actor', 'local/sloppy-model']);
    assert.notEqual(res.code, 0);
    assert.equal(fake.generations.length - before, 3, 'the first answer and two retries');
    const retry = JSON.stringify(bodyOf(fake.generations.at(-1) as RecordedRequest).messages);
    assert.match(retry, /does not follow the schema/);
    const id = /^plan: (\w{26})$/m.exec(res.stdout)?.[1] ?? '';
    assert.ok(id, `the plan id is printed:\n${res.stdout}\n${res.stderr}`);
    const status = await cli.ok(['plan', 'status', id]);
    assert.equal(status.state, 'errored');
    assert.equal(status.error.kind, 'strategy');
    assert.match(status.error.message, /off the strategy schema 3 times/);
    assert.match(status.error.hint, /--strategy-actor/);
  });

  it('a definition of done not met is said by status, before anyone applies', async () => {
    const res = await cli.run(
      [
        'plan',
        'use',
        '--goal',
        'fix the failing date parsing test',
        'local/api',
        '--strategy-actor',
        'local/gpt',
        '--execution-actor',
        'local/wrong-fix',
      ],
      { code: 0 },
    );
    const id = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    await cli.run(['plan', 'execute', id]);
    const status = await cli.ok(['plan', 'status', id]);
    assert.equal(status.done.met, false);
    assert.equal(status.done.verify.exitCode, 1);
    const shown = await cli.run(['plan', 'status', id], { code: 0 });
    assert.match(shown.stdout, /^done: NOT met — verify `.*test\.js` failed \(exit 1\)$/m);
  });

  it('a token budget stops the plan constrained, with the work kept; a larger budget resumes it', async () => {
    // The strategy actor's prompt alone is over 450 tokens: the budget stops it mid-step.
    const res = await cli.run([
      'plan',
      'use',
      '--goal',
      'fix the failing date parsing test',
      'local/api',
      '--actor',
      'local/gpt',
      '--max-tokens',
      '450',
    ]);
    assert.notEqual(res.code, 0);
    const id = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    const status = await cli.ok(['plan', 'status', id]);
    assert.equal(`${status.phase}/${status.state}`, 'strategize/constrained');
    assert.equal(status.error.kind, 'budget');
    assert.match(status.error.message, /budget exceeded: \d+ of 450 tokens used/);
    assert.match(status.error.hint, /--max-tokens/);
    await cli.run(['plan', 'execute', id, '--max-tokens', '100000'], { code: 0 });
    const done = await cli.ok(['plan', 'status', id]);
    assert.equal(done.state, 'complete');
    assert.equal(done.done.met, true);
  });
});

/**
 * End to end: instruction files (AGENTS.md, CLEVERAGENTS.md, files named by the project and by an
 * action) through the built `agents` CLI, in local mode (each command runs its own agent over
 * stdio) and against `agents serve` over HTTP. The model is the fake OpenAI-compatible server: what
 * it was sent proves that an AGENTS.md changes a chat turn's request and a plan's strategize and
 * execute requests; `agents project context inspect` lists the files with their token counts.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { startFakeOpenAI, type FakeLlm, type FakeReply, type RecordedRequest } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot, inBothModes, type Mode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-instructions-e2e');
const KEY = 'sk-instructions-e2e-0123456789';

let fake: FakeLlm;

interface OpenAiBody {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content?: unknown }>;
}
const bodyOf = (req: RecordedRequest): OpenAiBody => req.body as OpenAiBody;
const toolNames = (req: RecordedRequest): string[] => (bodyOf(req).tools ?? []).map((t) => t.function.name);
const systemOf = (req: RecordedRequest | undefined): string => {
  const m = req ? bodyOf(req).messages.find((x) => x.role === 'system') : undefined;
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
};
const call = (name: string, args: unknown): FakeReply => ({
  toolCalls: [{ id: `call_${Math.random().toString(36).slice(2, 10)}`, name, arguments: JSON.stringify(args) }],
  usage: { input: 100, output: 20 },
});

/** Strategize: submit at once; execute: finish at once; a chat turn: a short answer. */
function scripted(req: RecordedRequest): FakeReply {
  const names = toolNames(req);
  if (names.includes('submit_strategy'))
    return call('submit_strategy', {
      approach: 'change src/date.js',
      rationale: 'the bug is there',
      confidence: 0.8,
      alternatives: [{ option: 'rewrite it', reason: 'too large' }],
      decisions: [
        {
          question: 'Which file?',
          chosen: 'src/date.js',
          alternatives: [{ option: 'test.js', reason: 'it only checks' }],
          confidence: 0.9,
          rationale: 'parseDate is there',
        },
      ],
    });
  const finish = names.find((n) => /finish/.test(n));
  if (finish) return call(finish, { done: true, assessment: 'nothing had to change', confidence: 0.9 });
  return { text: ['noted'], usage: { input: 50, output: 2 } };
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  fake.reply(scripted);
});

after(async () => {
  await fake?.close();
});

const file = (name: string, text: string): string => {
  const p = join(ROOT, name);
  writeFileSync(p, text);
  return p;
};

function suite(mode: Mode): void {
  const repo = join(ROOT, `${mode.name}-repo`);
  const goal = 'fix the month in src/date.js';

  before(async () => {
    initRepo(repo, {
      'AGENTS.md': 'ROOT-RULE: keep every function pure.\n',
      'src/AGENTS.md': 'SRC-RULE: months are zero based here.\n',
      'src/date.js': 'exports.parseDate = (s) => new Date(s);\n',
      'docs/AGENTS.md': 'DOCS-RULE: never read by this goal.\n',
      'docs/STYLE.md': 'STYLE-RULE: short names.\n',
      'docs/ACTION.md': 'ACTION-RULE: say what you changed.\n',
      'test.js': "require('./src/date.js');\n",
    });
    await mode.cli.run(
      [
        'actor',
        'add',
        '--config',
        file(
          `${mode.name}-gpt.yaml`,
          `name: local/gpt\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: INSTR_E2E_KEY\n`,
        ),
      ],
      { code: 0 },
    );
    await mode.cli.run(['resource', 'add', 'git-checkout', 'local/api', '--path', repo], { code: 0 });
    await mode.cli.run(
      [
        'project',
        'add',
        '--config',
        file(
          `${mode.name}-api.project.yaml`,
          'name: local/api\nresources: [local/api]\nsettings:\n  context:\n    include: ["src/**", "test.js"]\n    instructions: { files: [docs/STYLE.md], maxTokens: 2000 }\n',
        ),
      ],
      { code: 0 },
    );
    await mode.cli.run(
      [
        'action',
        'add',
        '--config',
        file(
          `${mode.name}-fix.action.yaml`,
          'name: local/fix\ndescriptionTemplate: "{{goal}}"\ndefinitionOfDone: the test passes\narguments: { goal: { type: string, required: true } }\ninstructions: [docs/ACTION.md]\n',
        ),
      ],
      { code: 0 },
    );
  });

  it('context inspect lists the instruction files with their token counts (plain, rich and json)', async () => {
    const data = await mode.cli.ok(['project', 'context', 'inspect', 'api', '--goal', goal]);
    const listed = data.instructions.map((f: any) => [f.path, f.why, f.included]);
    assert.deepEqual(listed, [
      ['src/AGENTS.md', 'folder of src/date.js', true],
      ['AGENTS.md', 'root', true],
      ['docs/STYLE.md', 'named by project', true],
    ]);
    for (const f of data.instructions) assert.ok(f.tokens > 0 && f.bytes > 0, JSON.stringify(f));
    const tokens = data.instructions.reduce((n: number, f: any) => n + (f.tokens as number), 0);
    assert.equal(data.budget.used, data.totals.includedTokens + tokens, 'instructions count in the budget');
    assert.ok(!data.files.some((f: any) => f.path.endsWith('AGENTS.md')));

    const plain = await mode.cli.run(['project', 'context', 'inspect', 'api', '--goal', goal], { code: 0 });
    assert.match(plain.stdout, new RegExp(`^instructions: 3 files, ${tokens} tokens$`, 'm'));
    const root = data.instructions[1];
    assert.match(
      plain.stdout,
      new RegExp(
        `^instruction: AGENTS\\.md \\(local/api, ${root.bytes} bytes, ${root.tokens} tokens, included: root\\)$`,
        'm',
      ),
    );
    const rich = await mode.cli.run(['--format', 'rich', 'project', 'context', 'inspect', 'api', '--goal', goal], {
      code: 0,
    });
    assert.match(rich.stdout, /^INSTRUCTION FILE\s+SIZE\s+TOKENS\s+STATUS\s+WHY$/m);
    assert.match(
      rich.stdout,
      new RegExp(
        `^src/AGENTS\\.md\\s+\\d+ B\\s+${data.instructions[0].tokens}\\s+included\\s+folder of src/date\\.js$`,
        'm',
      ),
    );
    assert.match(rich.stdout, /^ {2}instructions\s+3 files, \d+ tokens$/m);

    const shown = await mode.cli.run(['project', 'context', 'show', 'api', '--view', 'default'], { code: 0 });
    assert.ok(
      shown.stdout
        .split('\n')
        .includes(
          'default\tinstructions\tenabled=true maxFileSize=16384 maxTokens=2000 files=docs/STYLE.md\tview:default',
        ),
      shown.stdout,
    );
  });

  it('a chat turn sends the instruction files before the files; changing AGENTS.md changes the request', async () => {
    await mode.cli.run(['send', '--actor', 'local/gpt', '--project', 'api', 'look at src/date.js'], { code: 0 });
    const system = systemOf(fake.generations.at(-1));
    assert.match(system, /Instructions for project local\/api from its instruction files/);
    assert.match(system, /=== AGENTS\.md \(local\/api, root\) ===\nROOT-RULE: keep every function pure\./);
    assert.match(system, /=== src\/AGENTS\.md \(local\/api, folder of src\/date\.js\) ===\nSRC-RULE/);
    assert.match(system, /STYLE-RULE/);
    assert.doesNotMatch(system, /DOCS-RULE|ACTION-RULE/, 'not in play, not named for a chat');
    assert.ok(
      system.indexOf('ROOT-RULE') < system.indexOf('Repository map of project local/api'),
      'instructions before the map',
    );
    assert.doesNotMatch(system, /--- src\/date\.js ---/, 'no file is sent whole: the model reads with its tools');

    writeFileSync(join(repo, 'AGENTS.md'), 'ROOT-RULE-2: prefer small commits.\n');
    await mode.cli.run(['send', '--actor', 'local/gpt', '--project', 'api', 'and now?'], { code: 0 });
    const again = systemOf(fake.generations.at(-1));
    assert.match(again, /ROOT-RULE-2: prefer small commits\./);
    assert.doesNotMatch(again, /keep every function pure/);
  });

  it("a plan's strategize and execute requests carry them, and the action's named file", async () => {
    const sent = fake.generations.length;
    const res = await mode.cli.run(
      ['plan', 'use', 'local/fix', 'local/api', '--arg', `goal=${goal}`, '--actor', 'local/gpt'],
      { code: 0 },
    );
    const planId = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    assert.ok(planId, res.stdout);
    const strategize = fake.generations.slice(sent).find((r) => toolNames(r).includes('submit_strategy'));
    const s = systemOf(strategize);
    assert.match(s, /ROOT-RULE-2/);
    assert.match(s, /=== src\/AGENTS\.md \(local\/api, folder of src\/date\.js\) ===/);
    assert.match(s, /=== docs\/ACTION\.md \(local\/api, named by action\) ===\nACTION-RULE/);

    const tree = await mode.cli.ok(['plan', 'tree', planId]);
    const explained = await mode.cli.run(['plan', 'explain', tree.decisions[0].children[0].id, '--show-context'], {
      code: 0,
    });
    assert.match(
      explained.stdout,
      /^context instruction: src\/AGENTS\.md \(local\/api, \d+ tokens, folder of src\/date\.js\)$/m,
    );
    assert.match(
      explained.stdout,
      /^context instruction: docs\/ACTION\.md \(local\/api, \d+ tokens, named by action\)$/m,
    );

    const before = fake.generations.length;
    await mode.cli.run(['plan', 'execute', planId], { code: 0 });
    const execute = fake.generations.slice(before).find((r) => toolNames(r).some((n) => /finish/.test(n)));
    const e = systemOf(execute);
    assert.match(e, /ROOT-RULE-2/);
    assert.match(e, /SRC-RULE/);
    assert.match(e, /ACTION-RULE/);
    assert.match(e, /STYLE-RULE/);

    const inspected = await mode.cli.ok(['project', 'context', 'inspect', 'api', '--plan', planId]);
    assert.ok(
      inspected.instructions.some((f: any) => f.path === 'docs/ACTION.md' && f.why === 'named by action'),
      JSON.stringify(inspected.instructions),
    );
  });
}

inBothModes('instruction files', { root: ROOT, env: { INSTR_E2E_KEY: KEY }, cli: { timeoutMs: 60_000 } }, suite);

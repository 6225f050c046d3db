/**
 * End to end: hooks through the built `agents` CLI, as a user sets them up — `agents hook
 * add|list|show|remove` and a veto hook stopping an LLM actor's tool call (the provider is the
 * fake OpenAI-compatible server), in local mode and against `agents serve`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot, inBothModes, type Mode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-hooks-e2e');
const KEY = 'sk-hooks-e2e-0123456789abcdef';

let fake: FakeLlm;
let repo: string;

const file = (name: string, text: string): string => {
  const p = join(ROOT, name);
  writeFileSync(p, text);
  return p;
};

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  repo = join(ROOT, 'repo');
  initRepo(repo, { 'notes.txt': 'the answer is 42\n' });
});

after(async () => {
  await fake?.close();
});

/** The same story in either mode: `cli` runs `agents` against that mode's agent. */
function hookStory({ name: mode, cli }: Mode): void {
  const project = `local/hooks-${mode}`;
  const hook = `local/no-notes-${mode}`;

  before(async () => {
    const { run } = cli;
    const actor = file(
      `actor-${mode}.yaml`,
      `name: local/hooks-gpt\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: HOOKS_E2E_KEY\nmaxRetries: 0\ntools: [builtin/read-file]\n`,
    );
    for (const args of [
      ['actor', 'add', '--config', actor],
      ['resource', 'add', 'git-checkout', project, '--path', repo],
      ['project', 'create', project, '--resource', project],
    ]) {
      const res = await run(args);
      assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
    }
  });

  it('hook add refuses a bad definition with file and line, then adds one; list and show describe it', async () => {
    const { run } = cli;
    const bad = file(
      `bad-${mode}.yaml`,
      `name: ${hook}\nevent: before-tool-call\ncommand: { program: sh }\ntimeoutSeconds: 0\n`,
    );
    const refused = await run(['hook', 'add', '--config', bad]);
    assert.equal(refused.code, 7, refused.stderr);
    assert.match(refused.stderr, /timeoutSeconds/);
    assert.match(refused.stderr, /must be between 1 and 600/);
    const config = file(
      `veto-${mode}.yaml`,
      [
        `name: ${hook}`,
        'description: notes stay private',
        'event: before-tool-call',
        `project: ${project}`,
        'tools: ["builtin/read-*"]',
        'command:',
        '  program: sh',
        `  args: ["-c", "echo '{\\"decision\\":\\"deny\\",\\"reason\\":\\"notes are private\\"}'"]`,
        '',
      ].join('\n'),
    );
    const added = await run(['hook', 'add', '--config', config]);
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stdout, `added\thook\t${hook}\t1\n`);
    const listed = await run(['hook', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(
      listed.stdout,
      new RegExp(`^${hook}\\t1\\tbefore-tool-call\\t${project}\\tcommand\\tnotes stay private$`, 'm'),
    );
    const byEvent = await run(['--format', 'json', 'hook', 'list', '--type', 'after-apply']);
    assert.equal((JSON.parse(byEvent.stdout) as { data: { totalSize: number } }).data.totalSize, 0);
    const updated = await run(['hook', 'update', hook, '--config', config]);
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, new RegExp(`\\b${hook}\\b`));
    const shown = await run(['hook', 'show', hook]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^event: before-tool-call \(may veto\)$/m);
    assert.match(shown.stdout, new RegExp(`^scope: project ${project}$`, 'm'));
    assert.match(shown.stdout, /^tools: builtin\/read-\*$/m);
    assert.match(shown.stdout, /^runs: command sh$/m);
    assert.match(shown.stdout, /^timeout: 10 s$/m);
    // The project is in use by the hook: removing it is refused.
    const inUse = await run(['project', 'remove', project]);
    assert.notEqual(inUse.code, 0);
    assert.match(inUse.stderr, new RegExp(`used by hook ${hook}`));
  });

  it('the veto stops the tool call: the user sees why, and so does the model', async () => {
    const { run } = cli;
    fake.push(
      { toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }] },
      { text: ['I may not read it.'] },
    );
    const res = await run([
      'send',
      '--actor',
      'local/hooks-gpt',
      '--project',
      project,
      '--stream',
      'what is in notes.txt?',
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'I may not read it.\n', 'the hook run is not part of the answer');
    assert.match(
      res.stderr,
      new RegExp(`^hook ${hook} before-tool-call builtin/read-file: deny \\(\\d+ ms\\): notes are private$`, 'm'),
    );
    assert.match(res.stderr, new RegExp(`tool: ✗ builtin/read-file vetoed: Vetoed by hook ${hook}: notes are private`));
    const body = fake.generations.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    assert.deepEqual(
      body.messages.filter((m) => m.role === 'tool').map((m) => m.content),
      [`Vetoed by hook ${hook}: notes are private`],
    );
  });

  it('hook remove removes it, and the next call runs', async () => {
    const { run } = cli;
    const removed = await run(['hook', 'remove', hook]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout, `removed\thook\t${hook}\n`);
    const missing = await run(['hook', 'show', hook]);
    assert.equal(missing.code, 3, missing.stderr);
    fake.push(
      { toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }] },
      { text: ['It says 42.'] },
    );
    const res = await run(['send', '--actor', 'local/hooks-gpt', '--project', project, 'what is in notes.txt?']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'It says 42.\n');
    const body = fake.generations.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    assert.match(String(body.messages.find((m) => m.role === 'tool')?.content), /the answer is 42/);
  });
}

inBothModes('agents hook', { root: ROOT, env: { HOOKS_E2E_KEY: KEY } }, hookStory);

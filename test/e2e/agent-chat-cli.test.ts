/**
 * End to end: the everyday agent as a user runs it — a chat bound to a project, through the built
 * `agents` CLI, against the fake OpenAI-compatible server (real HTTP, streamed as the real API
 * streams). A turn gets a repository map, not the files; the conversation is kept; an edit is
 * undone byte for byte; a shell command's output reaches the client as it comes and is stored.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GptTokenCounter } from '../../src/infrastructure/llm/token-counter.ts';
import { agentsCli } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm, type RecordedRequest } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-agent-e2e');
const KEY = 'sk-agent-e2e-0123456789abcdef';
const data = join(ROOT, 'data');
let fake: FakeLlm;
const cli = agentsCli({
  dataDir: data,
  configHome: join(ROOT, 'no-config'),
  env: { AGENT_E2E_KEY: KEY },
  timeoutMs: 60_000,
});

/** A source file of the generated project: a few exported functions with bodies. */
function module(i: number): string {
  const fns = Array.from(
    { length: 6 },
    (_, k) =>
      `export function step${i}x${k}(input: number): number {\n  const doubled = input * ${k + 2};\n  // keeps the value in range for module ${i}\n  return doubled > ${i * 10} ? doubled - ${i} : doubled + ${k};\n}\n`,
  );
  return `/** Module ${i} of the generated project. */\n${fns.join('\n')}`;
}

const systemOf = (r: RecordedRequest | undefined): string => {
  const m = (r?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  return JSON.stringify(m.find((x) => x.role === 'system')?.content ?? '');
};

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  const big = join(ROOT, 'big');
  const files: Record<string, string> = { 'AGENTS.md': 'Run the tests with npm test.\n' };
  for (let i = 0; i < 400; i++) files[`src/area${i % 20}/mod${i}.ts`] = module(i);
  initRepo(big, files);
  initRepo(join(ROOT, 'small'), { 'greet.txt': 'hello world\r\nsecond line\r\n', 'keep.bin': '\u0000\u0001binary' });
  const actor = join(ROOT, 'coder.yaml');
  writeFileSync(
    actor,
    `name: local/coder\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: AGENT_E2E_KEY\ncontextWindow: 200000\nmaxTokens: 4096\nprices: { inputPerMillion: 3, outputPerMillion: 15 }\n`,
  );
  mkdirSync(data, { recursive: true });
  for (const args of [
    ['actor', 'add', '--config', actor],
    ['resource', 'add', 'git-checkout', 'local/big', '--path', big],
    ['project', 'create', 'local/big', '--resource', 'local/big'],
    ['resource', 'add', 'git-checkout', 'local/small', '--path', join(ROOT, 'small')],
    ['project', 'create', 'local/small', '--resource', 'local/small', '--automation-profile', 'auto'],
  ])
    await cli.run(args, { code: 0 });
});

after(async () => {
  await fake?.close();
});

describe('the everyday agent (local mode)', () => {
  it('"hello" on a 400-file project sends a map and the tools, not the files: under 12k tokens', async () => {
    const tokens = new GptTokenCounter();
    fake.push({ text: ['Hello.'] });
    await cli.run(['send', '--actor', 'local/coder', '--project', 'local/big', 'hello'], { code: 0 });
    const sent = fake.generations.at(-1);
    const size = await tokens.count(JSON.stringify(sent?.body));
    assert.ok(size < 12_000, `the request is ${size} tokens`);
    const system = systemOf(sent);
    assert.match(system, /Run the tests with npm test/, 'the instruction file');
    assert.match(system, /Repository map of project local\/big \(400 files/);
    assert.doesNotMatch(system, /keeps the value in range/, 'no file body');
    const tools = (sent?.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    for (const t of ['read', 'grep', 'glob', 'list', 'edit', 'write', 'bash'])
      assert.ok(tools.includes(`builtin__${t}`), `${t} is offered`);

    // Opting into the whole view sends the files the context service selects: many times more.
    fake.push({ text: ['Hello again.'] });
    await cli.run(['send', '--actor', 'local/coder', '--project', 'local/big', '--context', 'full', 'hello'], {
      code: 0,
    });
    const full = await tokens.count(JSON.stringify(fake.generations.at(-1)?.body));
    assert.ok(full > 5 * size, `full context is ${full} tokens, the map ${size}`);
  });

  it('a 20-turn chat sends its earlier turns', async () => {
    const long = 'This is a long answer about the code. '.repeat(150);
    let n = 0;
    fake.reply(() => ({ text: [`Answer ${++n}. ${long}`] }));
    try {
      const lines = Array.from({ length: 20 }, (_, i) => `question ${i + 1}`).join('\n');
      await cli.run(['chat', '--actor', 'local/coder', '--project', 'local/big'], { code: 0, input: `${lines}\n` });
    } finally {
      fake.reply(() => ({ text: ['(no script)'] }));
    }
    const last = JSON.stringify(fake.generations.at(-1)?.body);
    for (let i = 1; i <= 19; i++) {
      assert.ok(last.includes(`question ${i}\\"`) || last.includes(`question ${i}"`), `turn ${i} is sent`);
      assert.ok(last.includes(`Answer ${i}.`), `answer ${i} is sent`);
    }
  });

  it('an edit, then /undo in the chat: the file is back byte for byte', async () => {
    const file = join(ROOT, 'small', 'greet.txt');
    const before = readFileSync(file);
    fake.push(
      {
        toolCalls: [
          {
            name: 'builtin__edit',
            arguments: JSON.stringify({ path: 'greet.txt', edits: [{ oldText: 'hello world', newText: 'goodbye' }] }),
          },
        ],
      },
      { text: ['Changed it.'] },
    );
    const sent = await cli.ok(['send', '--actor', 'local/coder', '--project', 'local/small', 'say goodbye']);
    assert.equal(sent.task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(readFileSync(file, 'utf8'), 'goodbye\r\nsecond line\r\n', 'CRLF kept');
    const session = sent.task.contextId as string;
    const shown = await cli.run(['session', 'show', session], { code: 0 });
    assert.match(shown.stdout, /greet\.txt/, 'session show lists the changed file');

    const undone = await cli.run(['chat', '--session', session], { code: 0, input: '/undo\n' });
    assert.match(undone.stdout + undone.stderr, /greet\.txt/);
    assert.deepEqual(readFileSync(file), before);
  });

  it("a shell command's output reaches the client as it is produced, and is stored with the turn", async () => {
    const marker = join(ROOT, 'small', '.go');
    fake.push(
      {
        toolCalls: [
          {
            name: 'builtin__bash',
            arguments: JSON.stringify({
              command: `echo first; while [ ! -e .go ]; do sleep 0.1; done; echo second | tr a-z A-Z`,
            }),
          },
        ],
      },
      { text: ['Ran it.'] },
    );
    let live = false;
    const res = await cli.run(['send', '--actor', 'local/coder', '--project', 'local/small', '--stream', 'run it'], {
      onStderr: (all) => {
        if (!live && all.includes('first')) {
          live = !all.includes('SECOND');
          writeFileSync(marker, '');
        }
      },
    });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(live, 'the first line was shown while the command still ran');
    assert.equal(res.stdout, 'Ran it.\n', 'the answer stays clean');
    const sessions = await cli.ok(['session', 'list']);
    const id = sessions.sessions[0].id as string;
    const shown = await cli.ok(['session', 'show', id]);
    const task = shown.tasks.at(-1);
    const output = (task.artifacts as Array<{ name: string; parts: Array<{ text?: string }> }>)
      .filter((a) => a.name === 'tool-output')
      .flatMap((a) => a.parts.map((p) => p.text ?? ''))
      .join('');
    assert.equal(output, 'first\nSECOND\n');
  });
});

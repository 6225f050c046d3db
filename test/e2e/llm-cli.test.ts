/**
 * End to end: chatting with an LLM actor through the built `agents` CLI, as a user does — the
 * provider is the fake OpenAI-compatible server (real HTTP, streamed as the real API streams), the
 * tools are the built-ins and a real MCP server, in local mode and against `agents serve`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { CliResult } from '../support/cli.ts';
import { createGate, startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually } from '../support/harness.ts';
import { e2eRoot, localMode, serverMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-llm-e2e');
const KEY = 'sk-e2e-0123456789abcdef';
const ENV = { LLM_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' };
const FIXTURE = fileURLToPath(new URL('../support/mcp-fixture-server.ts', import.meta.url));

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

describe('agents with an LLM actor (local mode)', () => {
  const { cli } = localMode({ root: ROOT, env: ENV });

  before(async () => {
    const actor = (name: string, extra: string): string =>
      file(
        `${name}.yaml`,
        `name: local/${name}\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: LLM_E2E_KEY\nprices: { inputPerMillion: 1, outputPerMillion: 4 }\n${extra}`,
      );
    for (const f of [
      actor('gpt', 'tools: [builtin/read-file]\n'),
      actor('writer', 'tools: [builtin/write-file]\n'),
      actor('mcp', 'skills: [local/fx]\n'),
      file(
        'nokey.yaml',
        `name: local/nokey\nprovider: openai-compatible\nmodel: m\nbaseUrl: ${fake.url}\napiKeyEnv: LLM_E2E_NOPE\n`,
      ),
    ]) {
      if (f.endsWith('mcp.yaml')) {
        const skill = file(
          'fx.skill.yaml',
          `name: local/fx\nmcpServers:\n  - name: fx\n    command: ${process.execPath}\n    args: [${JSON.stringify(FIXTURE)}]\n`,
        );
        assert.equal((await cli.run(['skill', 'add', '--config', skill])).code, 0);
      }
      const res = await cli.run(['actor', 'add', '--config', f]);
      assert.equal(res.code, 0, res.stderr);
    }
    for (const args of [
      ['resource', 'add', 'git-checkout', 'local/llm', '--path', repo],
      ['project', 'create', 'local/llm', '--resource', 'local/llm'],
    ]) {
      const res = await cli.run(args);
      assert.equal(res.code, 0, res.stderr);
    }
  });

  it('actor show says whether the key is there, never what it is', async () => {
    const shown = await cli.run(['actor', 'show', 'local/gpt']);
    assert.match(shown.stdout, /^api key: present \(env LLM_E2E_KEY\)$/m);
    assert.match(shown.stdout, /^runnable: yes$/m);
    assert.ok(!shown.stdout.includes(KEY));
    const missing = await cli.run(['actor', 'show', 'local/nokey']);
    assert.match(missing.stdout, /^api key: missing: LLM_E2E_NOPE is not set$/m);
    assert.match(missing.stdout, /^runnable: no$/m);
  });

  it('a failed send says why as an error with its hint (exit 9), not as a dump of the task', async () => {
    const res = await cli.run(['--format', 'plain', 'send', '--actor', 'local/nokey', 'hello']);
    assert.equal(res.code, 9, res.stderr);
    assert.equal(res.stdout, '');
    assert.match(
      res.stderr,
      /^error: task \S+ failed: No API key for local\/nokey: LLM_E2E_NOPE is not set \(TaskFailed\)$/m,
    );
    assert.match(res.stderr, /^hint: set LLM_E2E_NOPE in the environment /m);
    assert.doesNotMatch(res.stderr, /\{"error"/);
  });

  it('a failed send --stream ends with the same error and hint as plain send (exit 9)', async () => {
    const res = await cli.run(['--format', 'plain', 'send', '--stream', '--actor', 'local/nokey', 'hello']);
    assert.equal(res.code, 9, res.stderr);
    assert.match(
      res.stderr,
      /^error: task \S+ failed: No API key for local\/nokey: LLM_E2E_NOPE is not set \(TaskFailed\)$/m,
    );
    assert.match(res.stderr, /^hint: set LLM_E2E_NOPE in the environment /m);
    // Not the old one-line report of the task before the error.
    assert.doesNotMatch(res.stderr, /^task \S+ failed: /m);
  });

  it('send --stream prints the answer as it arrives, before the turn ends', async () => {
    const gate = createGate();
    fake.push({ text: ['Hel', 'lo', ' there'], gate: gate.promise, holdAfter: 1, usage: { input: 10, output: 3 } });
    let early = false;
    const res = await cli.run(['send', '--actor', 'local/gpt', '--stream', 'hi'], {
      onStdout: (all, child) => {
        if (!early && all.includes('Hel')) {
          early = child.exitCode === null;
          gate.release();
        }
      },
    });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(early, 'the first chunk was printed while the provider still held the rest');
    assert.equal(res.stdout, 'Hello there\n');
  });

  it('a tool call shows as a line of its own, the answer stays clean, and usage is kept', async () => {
    fake.push(
      {
        toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }],
        usage: { input: 20, output: 5 },
      },
      { text: ['It says 42.'], usage: { input: 40, output: 4 } },
    );
    const res = await cli.run([
      'send',
      '--actor',
      'local/gpt',
      '--project',
      'llm',
      '--stream',
      'what is in notes.txt?',
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'It says 42.\n');
    // The model gets a map of the project and reads what it needs with its tools: no file's text is sent.
    const first = fake.generations.at(-2)?.body as { messages: Array<{ role: string; content: unknown }> };
    const system = JSON.stringify(first.messages.find((m) => m.role === 'system')?.content);
    assert.match(system, /Repository map of project local\/llm/);
    assert.match(system, /notes\.txt/);
    assert.doesNotMatch(system, /the answer is 42/);
    assert.match(res.stderr, /^tool: → builtin\/read-file path=notes\.txt$/m);
    assert.match(res.stderr, /^tool: ✓ builtin\/read-file done \(\d+ ms\): read notes\.txt/m);
    const sessions = await cli.ok(['session', 'list']);
    const id = sessions.sessions[0].id as string;
    const shown = await cli.run(['--format', 'rich', 'session', 'show', id]);
    assert.match(shown.stdout, /usage {2}60 in \/ 9 out tokens · 1 tool call · 0\.0001 USD/);
    assert.match(shown.stdout, /✓ builtin\/read-file done/);
    assert.match(shown.stdout, /project +local\/llm/);
  });

  it('a write asks first: send --task … yes runs it', async () => {
    fake.push({ toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"yes.txt","content":"yes\\n"}' }] });
    // No terminal to answer on: exit 5 (as the README says), with the command that answers.
    const waits = await cli.json(['send', '--actor', 'local/writer', '--project', 'llm', 'write yes.txt'], { code: 5 });
    const asked = waits.data;
    assert.equal(asked.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(waits.data.error.type, 'ApprovalRequired');
    assert.equal(
      waits.data.error.hint,
      `approve: agents send --task ${asked.task.id} yes · reject: agents send --task ${asked.task.id} no`,
    );
    assert.equal(waits.data.error.message, `task ${asked.task.id} waits for approval of builtin/write-file`);
    assert.equal(existsSync(join(repo, 'yes.txt')), false);
    fake.push({ text: ['Written.'] });
    const res = await cli.run(['send', '--task', asked.task.id as string, 'yes']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'Written.\n');
    assert.equal(readFileSync(join(repo, 'yes.txt'), 'utf8'), 'yes\n');
  });

  it('in chat the next line answers the approval: no leaves the file alone', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"no.txt","content":"no"}' }] },
      { text: ['Understood, not writing it.'] },
    );
    const res = await cli.run(['chat', '--actor', 'local/writer', '--project', 'llm'], {
      input: 'write no.txt\nno\n/exit\n',
    });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /Allow builtin\/write-file path=no\.txt\?/);
    assert.match(res.stdout, /Understood, not writing it\./);
    assert.equal(existsSync(join(repo, 'no.txt')), false);
    assert.match(res.stderr, /declined by the user/);
  });

  it('actor run: one turn, streamed, and no session left unless kept', async () => {
    const before = (await cli.ok(['session', 'list'])).totalSize as number;
    fake.push({ text: ['one ', 'shot'] });
    const res = await cli.run(['actor', 'run', 'gpt', 'say', 'it']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'one shot\n');
    assert.equal((await cli.ok(['session', 'list'])).totalSize, before);
    fake.push({ text: ['kept'] });
    const kept = await cli.ok(['actor', 'run', 'local/gpt', 'again', '--keep-session']);
    assert.equal(kept.session.actor, 'local/gpt');
    assert.equal((await cli.ok(['session', 'list'])).totalSize, before + 1);
  });

  it('task cancel from another terminal ends a streaming answer there (each runs its own agent)', async () => {
    // The provider holds the answer after its first chunk until the cancel is recorded; the
    // streaming agent learns of it at the next chunk.
    const gate = createGate();
    fake.push({ text: Array.from({ length: 60 }, (_, i) => `w${i} `), gate: gate.promise, holdAfter: 1, delayMs: 20 });
    let cancelled: Promise<CliResult> | undefined;
    const res = await cli.run(['send', '--actor', 'local/gpt', '--stream', 'talk'], {
      onStdout: (all) => {
        if (cancelled || !all.includes('w0')) return;
        cancelled = (async () => {
          const tasks = await cli.ok(['task', 'list', '--status', 'working']);
          return cli.run(['task', 'cancel', tasks.tasks[0].id as string]);
        })().finally(gate.release);
      },
    });
    assert.ok(cancelled, 'the first chunk arrived');
    const cancel = await cancelled;
    assert.equal(cancel.code, 0, `task cancel: ${cancel.stdout}${cancel.stderr}`);
    assert.equal(res.code, 9, `a canceled task exits 9: ${res.stderr}`);
    assert.doesNotMatch(res.stderr, /BusinessRuleViolation|already has an event/);
    assert.doesNotMatch(res.stdout, /w59/, 'the answer stopped');
  });

  it('diagnostics checks each LLM actor: endpoint and key', async () => {
    const res = await cli.run(['--format', 'plain', 'diagnostics']);
    assert.match(res.stdout, /^ok\tactors\tactor local\/gpt\t.*model fake-model is listed/m);
    assert.match(res.stdout, /^fail\tactors\tactor local\/nokey\t.*no API key \(LLM_E2E_NOPE is not set\)/m);
  });

  it('skill show and tool list --mcp show the tools the MCP server lists; the model can call them', async () => {
    const shown = await cli.run(['skill', 'show', 'local/fx']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^mcp tool: mcp:fx\/echo {2}read-only/m);
    const listed = await cli.run(['--format', 'plain', 'tool', 'list', '--mcp']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^mcp:fx\/write_note\tlocal\/fx\tmay write\t/m);
    fake.push({ toolCalls: [{ name: 'mcp_fx__add', arguments: '{"a":2,"b":3}' }] }, { text: ['five'] });
    const res = await cli.run(['send', '--actor', 'local/mcp', '--stream', 'add 2 and 3']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /✓ mcp:fx\/add done/);
    assert.equal(res.stdout, 'five\n');
  });
});

describe('agents with an LLM actor (server mode)', () => {
  const { cli } = serverMode({ root: ROOT, env: ENV });

  before(async () => {
    const f = file(
      'srv.yaml',
      `name: local/srv\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: LLM_E2E_KEY\n`,
    );
    assert.equal((await cli.run(['actor', 'add', '--config', f])).code, 0);
  });

  it('task cancel from another terminal stops a streaming answer and hangs up on the provider', async () => {
    const gate = createGate();
    fake.push({ text: ['never', ' ends'], gate: gate.promise, holdAfter: 1 });
    const sent = fake.generations.length;
    let cancelled: Promise<CliResult> | undefined;
    const res = await cli.run(['send', '--actor', 'local/srv', '--stream', 'talk'], {
      onStdout: (all) => {
        if (cancelled || !all.includes('never')) return;
        cancelled = (async () => {
          const tasks = await cli.ok(['task', 'list', '--status', 'working']);
          return cli.run(['task', 'cancel', tasks.tasks[0].id as string]);
        })();
      },
    });
    assert.ok(cancelled, 'the first chunk arrived');
    assert.equal((await cancelled).code, 0);
    assert.equal(res.code, 9, `a canceled task exits 9: ${res.stderr}`);
    const req = await eventually(async () => Promise.resolve(fake.generations[sent]), 5000, 'the request');
    await req.closed;
    assert.equal(req.aborted, true);
    gate.release();
  });
});

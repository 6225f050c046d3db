/**
 * End to end: chatting with an LLM actor through the built `agents` CLI, as a user does — the
 * provider is the fake OpenAI-compatible server (real HTTP, streamed as the real API streams), the
 * tools are the built-ins and a real MCP server, in local mode and against `agents serve`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { BIN, cliEnv, collect, type CliResult } from '../support/cli.ts';
import { createGate, startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually, startHttpServer, type HttpServerProcess } from '../support/harness.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-llm-e2e-'));
const KEY = 'sk-e2e-0123456789abcdef';
const FIXTURE = fileURLToPath(new URL('../support/mcp-fixture-server.ts', import.meta.url));
const TOKEN = 'llm-e2e-token-0123456789abcdefgh';

let fake: FakeLlm;
let repo: string;

function start(args: string[], dataDir: string): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(dataDir, join(ROOT, 'no-config'), { LLM_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function run(
  args: string[],
  dataDir: string,
  opts: { input?: string; onStdout?: (all: string, child: ChildProcess) => void } = {},
): Promise<CliResult> {
  const child = start(args, dataDir);
  const onStdout = opts.onStdout;
  const result = collect(child, {
    timeoutMs: 30_000,
    ...(onStdout ? { onStdout: (all) => onStdout(all, child) } : {}),
  });
  child.stdin?.end(opts.input ?? '');
  return result;
}

async function json(args: string[], dataDir: string, code = 0): Promise<any> {
  const res = await run(['--format', 'json', ...args], dataDir);
  assert.equal(res.code, code, `agents ${args.join(' ')}: ${res.stdout}\n${res.stderr}`);
  return (JSON.parse(res.stdout) as { data: unknown }).data;
}

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
  rmSync(ROOT, { recursive: true, force: true });
});

describe('agents with an LLM actor (local mode)', () => {
  const data = join(ROOT, 'local');

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
        assert.equal((await run(['skill', 'add', '--config', skill], data)).code, 0);
      }
      const res = await run(['actor', 'add', '--config', f], data);
      assert.equal(res.code, 0, res.stderr);
    }
    for (const args of [
      ['resource', 'add', 'git-checkout', 'local/llm', '--path', repo],
      ['project', 'create', 'local/llm', '--resource', 'local/llm'],
    ]) {
      const res = await run(args, data);
      assert.equal(res.code, 0, res.stderr);
    }
  });

  it('actor show says whether the key is there, never what it is', async () => {
    const shown = await run(['actor', 'show', 'local/gpt'], data);
    assert.match(shown.stdout, /^api key: present \(env LLM_E2E_KEY\)$/m);
    assert.match(shown.stdout, /^runnable: yes$/m);
    assert.ok(!shown.stdout.includes(KEY));
    const missing = await run(['actor', 'show', 'local/nokey'], data);
    assert.match(missing.stdout, /^api key: missing: LLM_E2E_NOPE is not set$/m);
    assert.match(missing.stdout, /^runnable: no$/m);
  });

  it('send --stream prints the answer as it arrives, before the turn ends', async () => {
    const gate = createGate();
    fake.push({ text: ['Hel', 'lo', ' there'], gate: gate.promise, holdAfter: 1, usage: { input: 10, output: 3 } });
    let early = false;
    const res = await run(['send', '--actor', 'local/gpt', '--stream', 'hi'], data, {
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
    const res = await run(
      ['send', '--actor', 'local/gpt', '--project', 'llm', '--stream', 'what is in notes.txt?'],
      data,
    );
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
    const sessions = await json(['session', 'list'], data);
    const id = sessions.sessions[0].id as string;
    const shown = await run(['--format', 'rich', 'session', 'show', id], data);
    assert.match(shown.stdout, /usage {2}60 in \/ 9 out tokens · 1 tool call · 0\.0001 USD/);
    assert.match(shown.stdout, /✓ builtin\/read-file done/);
    assert.match(shown.stdout, /project +local\/llm/);
  });

  it('a write asks first: send --task … yes runs it', async () => {
    fake.push({ toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"yes.txt","content":"yes\\n"}' }] });
    const asked = await json(['send', '--actor', 'local/writer', '--project', 'llm', 'write yes.txt'], data);
    assert.equal(asked.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(existsSync(join(repo, 'yes.txt')), false);
    fake.push({ text: ['Written.'] });
    const res = await run(['send', '--task', asked.task.id as string, 'yes'], data);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'Written.\n');
    assert.equal(readFileSync(join(repo, 'yes.txt'), 'utf8'), 'yes\n');
  });

  it('in chat the next line answers the approval: no leaves the file alone', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"no.txt","content":"no"}' }] },
      { text: ['Understood, not writing it.'] },
    );
    const res = await run(['chat', '--actor', 'local/writer', '--project', 'llm'], data, {
      input: 'write no.txt\nno\n/exit\n',
    });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /Allow builtin\/write-file path=no\.txt\?/);
    assert.match(res.stdout, /Understood, not writing it\./);
    assert.equal(existsSync(join(repo, 'no.txt')), false);
    assert.match(res.stderr, /declined by the user/);
  });

  it('actor run: one turn, streamed, and no session left unless kept', async () => {
    const before = (await json(['session', 'list'], data)).totalSize as number;
    fake.push({ text: ['one ', 'shot'] });
    const res = await run(['actor', 'run', 'gpt', 'say', 'it'], data);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'one shot\n');
    assert.equal((await json(['session', 'list'], data)).totalSize, before);
    fake.push({ text: ['kept'] });
    const kept = await json(['actor', 'run', 'local/gpt', 'again', '--keep-session'], data);
    assert.equal(kept.session.actor, 'local/gpt');
    assert.equal((await json(['session', 'list'], data)).totalSize, before + 1);
  });

  it('task cancel from another terminal ends a streaming answer there (each runs its own agent)', async () => {
    // The provider holds the answer after its first chunk until the cancel is recorded; the
    // streaming agent learns of it at the next chunk.
    const gate = createGate();
    fake.push({ text: Array.from({ length: 60 }, (_, i) => `w${i} `), gate: gate.promise, holdAfter: 1, delayMs: 20 });
    let cancelled: Promise<CliResult> | undefined;
    const res = await run(['send', '--actor', 'local/gpt', '--stream', 'talk'], data, {
      onStdout: (all) => {
        if (cancelled || !all.includes('w0')) return;
        cancelled = (async () => {
          const tasks = await json(['task', 'list', '--status', 'working'], data);
          return run(['task', 'cancel', tasks.tasks[0].id as string], data);
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
    const res = await run(['--format', 'plain', 'diagnostics'], data);
    assert.match(res.stdout, /^ok\tactors\tactor local\/gpt\t.*model fake-model is listed/m);
    assert.match(res.stdout, /^fail\tactors\tactor local\/nokey\t.*no API key \(LLM_E2E_NOPE is not set\)/m);
  });

  it('skill show and tool list --mcp show the tools the MCP server lists; the model can call them', async () => {
    const shown = await run(['skill', 'show', 'local/fx'], data);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^mcp tool: mcp:fx\/echo {2}read-only/m);
    const listed = await run(['--format', 'plain', 'tool', 'list', '--mcp'], data);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^mcp:fx\/write_note\tlocal\/fx\tmay write\t/m);
    fake.push({ toolCalls: [{ name: 'mcp_fx__add', arguments: '{"a":2,"b":3}' }] }, { text: ['five'] });
    const res = await run(['send', '--actor', 'local/mcp', '--stream', 'add 2 and 3'], data);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /✓ mcp:fx\/add done/);
    assert.equal(res.stdout, 'five\n');
  });
});

describe('agents with an LLM actor (server mode)', () => {
  const data = join(ROOT, 'server');
  const client = join(ROOT, 'server-client');
  let server: HttpServerProcess;
  const remote = (...args: string[]): string[] => ['--server', server.baseUrl, '--token', TOKEN, ...args];

  before(async () => {
    server = await startHttpServer({
      dataDir: data,
      token: TOKEN,
      env: cliEnv(data, join(ROOT, 'no-config'), { LLM_E2E_KEY: KEY }),
    });
    const f = file(
      'srv.yaml',
      `name: local/srv\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: LLM_E2E_KEY\n`,
    );
    assert.equal((await run(remote('actor', 'add', '--config', f), client)).code, 0);
  });

  after(() => server?.stop());

  it('task cancel from another terminal stops a streaming answer and hangs up on the provider', async () => {
    const gate = createGate();
    fake.push({ text: ['never', ' ends'], gate: gate.promise, holdAfter: 1 });
    const sent = fake.generations.length;
    let cancelled: Promise<CliResult> | undefined;
    const res = await run(remote('send', '--actor', 'local/srv', '--stream', 'talk'), client, {
      onStdout: (all) => {
        if (cancelled || !all.includes('never')) return;
        cancelled = (async () => {
          const tasks = await json(remote('task', 'list', '--status', 'working'), client);
          return run(remote('task', 'cancel', tasks.tasks[0].id as string), client);
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

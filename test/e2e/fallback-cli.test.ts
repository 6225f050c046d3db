/**
 * End to end: an actor's fallbacks through the built `agents` CLI — the first model is a fake
 * OpenAI-compatible server answering 429, the fallback another one — in local mode (send, chat,
 * task get, a plan's strategize phase, removal refused) and against `agents serve`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, cliEnv, collect, type CliResult } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm, type FakeReply } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-fallback-e2e-'));
const KEY = 'sk-fallback-e2e-0123456789abcdef';
const TOKEN = 'fallback-e2e-token-0123456789abcdefgh';
const ENV = { FB_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' };
const rateLimited: FakeReply = { error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down' } };
const ANSWERED = /answered by local\/second after local\/first: rate limited \(429\)/;

let first: FakeLlm;
let second: FakeLlm;

function run(args: string[], dataDir: string, input = ''): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(dataDir, join(ROOT, 'no-config'), ENV),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const result = collect(child, { timeoutMs: 30_000 });
  child.stdin?.end(input);
  return result;
}

async function ok(args: string[], dataDir: string, input = ''): Promise<CliResult> {
  const res = await run(args, dataDir, input);
  assert.equal(res.code, 0, `agents ${args.join(' ')} exited ${res.code}:\n${res.stdout}\n${res.stderr}`);
  return res;
}

async function json(args: string[], dataDir: string): Promise<any> {
  return (JSON.parse((await ok(['--format', 'json', ...args], dataDir)).stdout) as { data: unknown }).data;
}

const file = (name: string, text: string): string => {
  const p = join(ROOT, name);
  writeFileSync(p, text);
  return p;
};

/** local/second on the second fake, then local/first on the first with local/second as its fallback. */
async function addActors(cli: (args: string[]) => Promise<CliResult>, tag: string): Promise<void> {
  const actor = (name: string, fake: FakeLlm, extra = ''): string =>
    file(
      `${tag}-${name}.yaml`,
      `name: local/${name}\nprovider: openai-compatible\nmodel: ${name}-model\nbaseUrl: ${fake.url}\napiKeyEnv: FB_E2E_KEY\nmaxRetries: 0\n${extra}`,
    );
  for (const f of [actor('second', second), actor('first', first, 'fallbacks: [local/second]\n')]) {
    const res = await cli(['actor', 'add', '--config', f]);
    assert.equal(res.code, 0, res.stderr);
  }
}

before(async () => {
  first = await startFakeOpenAI({ expectKey: KEY, models: ['first-model'] });
  second = await startFakeOpenAI({ expectKey: KEY, models: ['second-model'] });
});

after(async () => {
  await Promise.all([first?.close(), second?.close()]);
  rmSync(ROOT, { recursive: true, force: true });
});

describe('fallbacks through the CLI (local mode)', () => {
  const data = join(ROOT, 'local');

  before(async () => {
    await addActors((args) => run(args, data), 'local');
  });

  it('send: a 429 goes to the fallback; the end line and task get say who answered and why', async () => {
    first.push(rateLimited);
    second.push({ text: ['second ', 'speaking'] });
    const sent = second.generations.length;
    const res = await ok(['send', '--actor', 'local/first', '--stream', 'who is there?'], data);
    assert.equal(res.stdout, 'second speaking\n');
    assert.match(res.stderr, new RegExp(`^fallback: ${ANSWERED.source}$`, 'm'));
    assert.match(JSON.stringify(second.generations[sent]?.body), /who is there\?/);
    const tasks = await json(['task', 'list'], data);
    const id = tasks.tasks[0].id as string;
    const shown = await ok(['task', 'get', id], data);
    assert.match(shown.stdout, new RegExp(`^fallback: ${ANSWERED.source}$`, 'm'));
    const { task } = await json(['task', 'get', id], data);
    assert.equal(task.metadata.usage.actor, 'local/second');
    assert.equal(task.metadata.usage.model, 'second-model');
    assert.deepEqual(
      task.metadata.fallbacks.map((r: any) => [r.actor, r.model, r.kind, r.status, r.next]),
      [['local/first', 'first-model', 'rate-limit', 429, 'local/second']],
    );
  });

  it('chat: the line after the answer names the fallback, and session show keeps it', async () => {
    first.push(rateLimited);
    second.push({ text: ['hello from two'] });
    const res = await ok(['chat', '--actor', 'local/first'], data, 'hi\n/exit\n');
    assert.match(res.stdout, /hello from two/);
    assert.match(res.stderr, ANSWERED);
    const sessions = await json(['session', 'list'], data);
    const shown = await ok(['--format', 'rich', 'session', 'show', sessions.sessions[0].id as string], data);
    assert.match(shown.stdout, /hello from two/);
    assert.match(shown.stdout, ANSWERED);
  });

  it('an actor used as a fallback cannot be removed', async () => {
    const res = await run(['actor', 'remove', 'local/second'], data);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /actor local\/second is used by actor local\/first/);
    await ok(['actor', 'show', 'local/second'], data);
  });

  it("a plan's strategize phase falls back, and its task says so", async () => {
    const repo = join(ROOT, 'repo');
    initRepo(repo, { 'README.md': '# fallbacks\n' });
    await ok(['resource', 'add', 'git-checkout', 'local/fb', '--path', repo], data);
    await ok(['project', 'create', 'local/fb', '--resource', 'local/fb'], data);
    first.push(rateLimited);
    second.push({
      toolCalls: [
        {
          name: 'submit_strategy',
          arguments: JSON.stringify({
            approach: 'edit the README',
            rationale: 'it is the only file',
            confidence: 0.9,
            alternatives: [{ option: 'do nothing', reason: 'the goal asks for a change' }],
            decisions: [
              {
                question: 'Which file?',
                chosen: 'README.md',
                alternatives: [{ option: 'a new file', reason: 'not asked for' }],
                confidence: 0.9,
                rationale: 'the goal names it',
              },
            ],
          }),
        },
      ],
    });
    const res = await ok(['plan', 'use', '--goal', 'improve the README', 'local/fb', '--actor', 'local/first'], data);
    assert.match(res.stdout, /^decision: 1 \S+ Which file\? → README\.md$/m);
    const planId = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    const plan = await json(['plan', 'status', planId], data);
    const { task } = await json(['task', 'get', plan.tasks.strategize as string], data);
    assert.deepEqual(
      task.metadata.fallbacks.map((r: any) => [r.actor, r.kind, r.next]),
      [['local/first', 'rate-limit', 'local/second']],
    );
    assert.match((await ok(['task', 'get', plan.tasks.strategize as string], data)).stdout, ANSWERED);
  });
});

describe('fallbacks through the CLI (server mode)', () => {
  const data = join(ROOT, 'server');
  const client = join(ROOT, 'server-client');
  let server: HttpServerProcess;
  const remote = (...args: string[]): string[] => ['--server', server.baseUrl, '--token', TOKEN, ...args];

  before(async () => {
    server = await startHttpServer({ dataDir: data, token: TOKEN, env: cliEnv(data, join(ROOT, 'no-config'), ENV) });
    await addActors((args) => run(remote(...args), client), 'server');
  });

  after(() => server?.stop());

  it('send and task get: the fallback answered, recorded on the server', async () => {
    first.push(rateLimited);
    second.push({ text: ['remote two'] });
    const res = await ok(remote('send', '--actor', 'local/first', 'hi'), client);
    assert.equal(res.stdout, 'remote two\n');
    assert.match(res.stderr, ANSWERED);
    const tasks = await json(remote('task', 'list'), client);
    const id = tasks.tasks[0].id as string;
    assert.match((await ok(remote('task', 'get', id), client)).stdout, ANSWERED);
    const { task } = await json(remote('task', 'get', id), client);
    assert.equal(task.metadata.usage.actor, 'local/second');
    const refused = await run(remote('actor', 'remove', 'local/second'), client);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /is used by actor local\/first/);
  });
});

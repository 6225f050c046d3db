/**
 * End to end: an actor's fallbacks through the built `agents` CLI — the first model is a fake
 * OpenAI-compatible server answering 429, the fallback another one — in local mode (send, chat,
 * task get, a plan's strategize phase, removal refused) and against `agents serve`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Agents } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm, type FakeReply } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot, localMode, serverMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-fallback-e2e');
const KEY = 'sk-fallback-e2e-0123456789abcdef';
const ENV = { FB_E2E_KEY: KEY, CLEVERAGENTS_LLM_RETRY_BASE_MS: '20' };
const rateLimited: FakeReply = { error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down' } };
const ANSWERED = /answered by local\/second after local\/first: rate limited \(429\)/;

let first: FakeLlm;
let second: FakeLlm;

const file = (name: string, text: string): string => {
  const p = join(ROOT, name);
  writeFileSync(p, text);
  return p;
};

/** local/second on the second fake, then local/first on the first with local/second as its fallback. */
async function addActors(cli: Agents, tag: string): Promise<void> {
  const actor = (name: string, fake: FakeLlm, extra = ''): string =>
    file(
      `${tag}-${name}.yaml`,
      `name: local/${name}\nprovider: openai-compatible\nmodel: ${name}-model\nbaseUrl: ${fake.url}\napiKeyEnv: FB_E2E_KEY\nmaxRetries: 0\n${extra}`,
    );
  for (const f of [actor('second', second), actor('first', first, 'fallbacks: [local/second]\n')]) {
    const res = await cli.run(['actor', 'add', '--config', f]);
    assert.equal(res.code, 0, res.stderr);
  }
}

before(async () => {
  first = await startFakeOpenAI({ expectKey: KEY, models: ['first-model'] });
  second = await startFakeOpenAI({ expectKey: KEY, models: ['second-model'] });
});

after(async () => {
  await Promise.all([first?.close(), second?.close()]);
});

describe('fallbacks through the CLI (local mode)', () => {
  const { cli } = localMode({ root: ROOT, env: ENV });

  before(async () => {
    await addActors(cli, 'local');
  });

  it('send: a 429 goes to the fallback; the end line and task get say who answered and why', async () => {
    first.push(rateLimited);
    second.push({ text: ['second ', 'speaking'] });
    const sent = second.generations.length;
    const res = await cli.run(['send', '--actor', 'local/first', '--stream', 'who is there?'], { code: 0 });
    assert.equal(res.stdout, 'second speaking\n');
    assert.match(res.stderr, new RegExp(`^fallback: ${ANSWERED.source}$`, 'm'));
    assert.match(JSON.stringify(second.generations[sent]?.body), /who is there\?/);
    const tasks = await cli.ok(['task', 'list']);
    const id = tasks.tasks[0].id as string;
    const shown = await cli.run(['task', 'get', id], { code: 0 });
    assert.match(shown.stdout, new RegExp(`^fallback: ${ANSWERED.source}$`, 'm'));
    const { task } = await cli.ok(['task', 'get', id]);
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
    const res = await cli.run(['chat', '--actor', 'local/first'], { code: 0, input: 'hi\n/exit\n' });
    assert.match(res.stdout, /hello from two/);
    assert.match(res.stderr, ANSWERED);
    const sessions = await cli.ok(['session', 'list']);
    const shown = await cli.run(['--format', 'rich', 'session', 'show', sessions.sessions[0].id as string], {
      code: 0,
    });
    assert.match(shown.stdout, /hello from two/);
    assert.match(shown.stdout, ANSWERED);
  });

  it('an actor used as a fallback cannot be removed', async () => {
    const res = await cli.run(['actor', 'remove', 'local/second']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /actor local\/second is used by actor local\/first/);
    await cli.run(['actor', 'show', 'local/second'], { code: 0 });
  });

  it("a plan's strategize phase falls back, and its task says so", async () => {
    const repo = join(ROOT, 'repo');
    initRepo(repo, { 'README.md': '# fallbacks\n' });
    await cli.run(['resource', 'add', 'git-checkout', 'local/fb', '--path', repo], { code: 0 });
    await cli.run(['project', 'create', 'local/fb', '--resource', 'local/fb'], { code: 0 });
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
    const res = await cli.run(['plan', 'use', '--goal', 'improve the README', 'local/fb', '--actor', 'local/first'], {
      code: 0,
    });
    assert.match(res.stdout, /^decision: 1 \S+ Which file\? → README\.md$/m);
    const planId = /^plan: (\S+)$/m.exec(res.stdout)?.[1] ?? '';
    const plan = await cli.ok(['plan', 'status', planId]);
    const { task } = await cli.ok(['task', 'get', plan.tasks.strategize as string]);
    assert.deepEqual(
      task.metadata.fallbacks.map((r: any) => [r.actor, r.kind, r.next]),
      [['local/first', 'rate-limit', 'local/second']],
    );
    assert.match((await cli.run(['task', 'get', plan.tasks.strategize as string], { code: 0 })).stdout, ANSWERED);
  });
});

describe('fallbacks through the CLI (server mode)', () => {
  const { cli } = serverMode({ root: ROOT, env: ENV });

  before(async () => {
    await addActors(cli, 'server');
  });

  it('send and task get: the fallback answered, recorded on the server', async () => {
    first.push(rateLimited);
    second.push({ text: ['remote two'] });
    const res = await cli.run(['send', '--actor', 'local/first', 'hi'], { code: 0 });
    assert.equal(res.stdout, 'remote two\n');
    assert.match(res.stderr, ANSWERED);
    const tasks = await cli.ok(['task', 'list']);
    const id = tasks.tasks[0].id as string;
    assert.match((await cli.run(['task', 'get', id], { code: 0 })).stdout, ANSWERED);
    const { task } = await cli.ok(['task', 'get', id]);
    assert.equal(task.metadata.usage.actor, 'local/second');
    const refused = await cli.run(['actor', 'remove', 'local/second']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /is used by actor local\/first/);
  });
});

/**
 * End to end: a model's regular expression cannot block the server. The fake model asks `grep`
 * for `(a+)+$` on a line of forty `a`s and a `b` — minutes of backtracking on a thread. Against
 * `agents serve` (the built bundle), the call fails at its 10 s deadline with the advice, the model
 * gets that answer, and meanwhile the same server answers `agents health`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, type Agents, type CliResult } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-regex-e2e-'));
const KEY = 'sk-regex-e2e-0123456789abcdef';
const TOKEN = 'regex-e2e-token-0123456789abcdefgh';
const DEADLINE_ANSWER =
  'the pattern took longer than 10 s on src/slow.txt; simplify it (nested quantifiers like (a+)+ backtrack exponentially)';

let fake: FakeLlm;
let server: HttpServerProcess;
const env: NodeJS.ProcessEnv = { REGEX_E2E_KEY: KEY };
const agents: Agents = agentsCli({
  dataDir: join(ROOT, 'client'),
  configHome: join(ROOT, 'no-config'),
  env,
  prefix: () => ['--server', server.baseUrl, '--token', TOKEN],
  timeoutMs: 60_000,
});

async function ok(args: string[]): Promise<CliResult> {
  const res = await agents.run(args);
  assert.equal(res.code, 0, `agents ${args.join(' ')}\n${res.stdout}\n${res.stderr}`);
  return res;
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  const data = join(ROOT, 'server');
  server = await startHttpServer({ dataDir: data, token: TOKEN, env: { ...process.env, ...env } });
  const repo = join(ROOT, 'repo');
  initRepo(repo, { 'src/fine.ts': 'export const a = 1;\n', 'src/slow.txt': `${'a'.repeat(40)}b\n` });
  const actor = join(ROOT, 'coder.yaml');
  writeFileSync(
    actor,
    `name: local/coder\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: REGEX_E2E_KEY\n`,
  );
  await ok(['actor', 'add', '--config', actor]);
  await ok(['resource', 'add', 'git-checkout', 'local/repo', '--path', repo]);
  await ok(['project', 'create', 'local/repo', '--resource', 'local/repo']);
});

after(async () => {
  await server?.stop();
  await fake?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

describe('a catastrophic regular expression from the model (server mode, the built bundle)', () => {
  it('fails at its deadline with the advice, and the server answers health meanwhile', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__grep', arguments: JSON.stringify({ pattern: '(a+)+$' }) }] },
      { text: ['The search was too slow.'] },
    );
    const order: string[] = [];
    // The send's own progress says when the server has started matching: `tool: → builtin/grep …`.
    let matching!: () => void;
    const started = new Promise<void>((resolve) => (matching = resolve));
    const sent = agents
      .run(['send', '--stream', '--actor', 'local/coder', '--project', 'local/repo', 'find the runs of a'], {
        onStderr: (all) => void (/→ builtin.grep/.test(all) && matching()),
      })
      .then((r) => {
        order.push('send');
        matching(); // a send that ends without the line fails the order check below, not by hanging
        return r;
      });
    await started;
    const health = await agents.run(['health']);
    order.push('health');
    assert.equal(health.code, 0, health.stderr);

    const res = await sent;
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.trim(), 'The search was too slow.');
    assert.deepEqual(
      order,
      ['health', 'send'],
      `health answered while the pattern was still being matched\n${res.stderr}`,
    );
    const toolAnswer = JSON.stringify(fake.generations.at(-1)?.body);
    assert.ok(toolAnswer.includes(DEADLINE_ANSWER), `the model is told why: ${toolAnswer.slice(-600)}`);
  });
});

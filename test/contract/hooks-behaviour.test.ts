/**
 * Hooks through the real agent (in-memory transport; the registry rows are covered over every
 * transport by the contract suite): a veto stops a chat tool call and the model is told why, an
 * after hook's output is kept on the task, hooks fail closed, commands run confined, a plan's
 * tool calls, phase changes and apply run their hooks, and a webhook hook reaches a real receiver.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Task } from '../../src/domain/a2a.model.ts';
import {
  actionRegistry,
  getTask,
  hookRegistry,
  planApply,
  planExecute,
  planStatus,
  planUse,
  projectRegistry,
  resourceRegistry,
  sessionCreate,
  type A2AClient,
} from '../../src/protocol/client/index.ts';
import { startFakeOpenAI, type FakeLlm, type FakeReply } from '../support/fake-llm.ts';
import { startHarness, tempDir, type Harness } from '../support/harness.ts';
import { addActor, LLM_TEST_KEY, statusText, streamTurn, toolCalls, type Turn } from './llm.suite.ts';
import { makeRepo } from './registry.suite.ts';

process.env['LLM_TEST_KEY'] = LLM_TEST_KEY;
process.env['CLEVERAGENTS_LLM_RETRY_BASE_MS'] = '20';
// A secret of the server process: no hook command may see it.
const SECRET = 'sk-server-secret-hooks-0123456789';
process.env['HOOKS_TEST_SERVER_SECRET'] = SECRET;
// The webhook receiver listens on loopback.
process.env['CLEVERAGENTS_PUSH_ALLOW_HOSTS'] = '127.0.0.1';

type Body = { messages: Array<{ role: string; content?: unknown }> };
const toolResults = (f: FakeLlm): string[] =>
  (f.generations.at(-1)?.body as Body).messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
const hookRuns = (t: Task): Array<Record<string, unknown>> =>
  (t.artifacts ?? []).filter((a) => a.name === 'hook').map((a) => a.parts[0]?.data as Record<string, unknown>);
const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
const sh = (script: string) => ({ program: 'sh', args: ['-c', script] });
const READ = (path: string): FakeReply => ({
  toolCalls: [{ name: 'builtin__read-file', arguments: JSON.stringify({ path }) }],
});

describe('hooks', () => {
  let h: Harness;
  let client: A2AClient;
  let fake: FakeLlm;
  let work: string;
  let repo: string;
  let actor: string;
  let receiver: http.Server;
  let receiverUrl: string;
  const posted: string[] = [];

  const hook = (definition: Record<string, unknown>) => client.call(hookRegistry.add, { definition });
  const unhook = (...names: string[]) =>
    Promise.all(names.map((name) => client.call(hookRegistry.remove, { name, force: true })));

  async function turn(project: string, text: string, ...replies: FakeReply[]): Promise<Turn> {
    fake.push(...replies);
    const s = await client.call(sessionCreate, { actor, project });
    return streamTurn(client, text, { contextId: s.id });
  }

  before(async () => {
    h = await startHarness('memory');
    client = h.client;
    fake = await startFakeOpenAI({ expectKey: LLM_TEST_KEY });
    work = tempDir('ca-hooks-');
    repo = makeRepo(join(work, 'repo'));
    writeFileSync(join(repo, 'notes.txt'), 'the answer is 42\n');
    writeFileSync(join(repo, 'greeting.txt'), 'hello world\n');
    git(repo, 'add', '.');
    git(repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'files');
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/hooks', type: 'git-checkout', path: repo, branch: 'main' },
    });
    for (const name of ['local/hooked', 'local/plain'])
      await client.call(projectRegistry.add, { definition: { name, resources: ['local/hooks'] } });
    actor = 'local/hooks-gpt';
    await addActor(client, {
      name: actor,
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'LLM_TEST_KEY',
      maxRetries: 0,
      tools: ['builtin/read-file'],
    });
    await client.call(actionRegistry.add, {
      definition: {
        name: 'local/hooks-greet',
        arguments: { who: { type: 'string', required: true } },
        descriptionTemplate: 'Greet {{who}}',
        definitionOfDone: 'greeting.txt greets {{who}}',
        steps: [{ tool: 'builtin/edit-file', args: { path: 'greeting.txt', find: 'world', replace: '{{who}}' } }],
      },
    });
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        posted.push(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"decision":"deny","reason":"the release is frozen"}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });

  after(async () => {
    await h?.close();
    await fake?.close();
    await new Promise((r) => receiver?.close(r));
    rmSync(work, { recursive: true, force: true });
  });

  describe('in a chat', () => {
    it('a veto hook stops the tool call: the model is told why, the call shows vetoed, the run is kept', async () => {
      await hook({
        name: 'local/no-notes',
        event: 'before-tool-call',
        project: 'local/hooked',
        tools: ['builtin/read-*'],
        command: sh('echo \'{"decision":"deny","reason":"notes are private"}\''),
      });
      const t = await turn('local/hooked', 'read notes', READ('notes.txt'), { text: ['I may not.'] });
      assert.equal(t.task.status.state, 'TASK_STATE_COMPLETED');
      assert.deepEqual(toolResults(fake), ['Vetoed by hook local/no-notes: notes are private']);
      const [call] = toolCalls(t.task);
      assert.equal(call?.['state'], 'vetoed');
      assert.equal(call?.['hook'], 'local/no-notes');
      const [run] = hookRuns(t.task);
      assert.equal(run?.['decision'], 'deny');
      assert.equal(run?.['event'], 'before-tool-call');
      assert.equal(run?.['tool'], 'builtin/read-file');
      assert.equal(run?.['exitCode'], 0);
    });

    it('a project hook does not run for another project, nor a tool outside its globs', async () => {
      const other = await turn('local/plain', 'read notes', READ('notes.txt'), { text: ['42.'] });
      assert.deepEqual(hookRuns(other.task), []);
      assert.match(toolResults(fake)[0] ?? '', /the answer is 42/);
      await unhook('local/no-notes');
      await hook({
        name: 'local/no-writes',
        event: 'before-tool-call',
        tools: ['builtin/write-*'],
        command: { program: 'false' },
      });
      const globbed = await turn('local/hooked', 'read notes', READ('notes.txt'), { text: ['42.'] });
      assert.deepEqual(hookRuns(globbed.task), []);
      assert.equal(toolCalls(globbed.task)[0]?.['state'], 'done');
      await unhook('local/no-writes');
    });

    it("an after hook's output is recorded on the task; its command sees the event and not the server's secrets", async () => {
      await hook({
        name: 'local/audit',
        event: 'after-tool-call',
        command: sh('echo "secret=[$HOOKS_TEST_SERVER_SECRET]"; cat'),
      });
      const t = await turn('local/hooked', 'read notes', READ('notes.txt'), { text: ['42.'] });
      assert.equal(toolCalls(t.task)[0]?.['state'], 'done');
      const [run] = hookRuns(t.task);
      assert.equal(run?.['decision'], 'ok');
      const output = String(run?.['output']);
      assert.match(output, /^secret=\[\]\n/);
      assert.ok(!output.includes(SECRET));
      const event = JSON.parse(output.split('\n')[1] ?? '') as Record<string, any>;
      assert.equal(event['event'], 'after-tool-call');
      assert.equal(event['hook'], 'local/audit');
      assert.equal(event['project'], 'local/hooked');
      assert.equal(event['task'], t.task.id);
      assert.equal(event['tool'], 'builtin/read-file');
      assert.deepEqual(event['arguments'], { path: 'notes.txt' });
      assert.equal(event['result'].ok, true);
      assert.match(event['result'].output, /the answer is 42/);
      await unhook('local/audit');
    });

    it('a before hook that times out vetoes (fail closed), saying so', async () => {
      await hook({ name: 'local/slow', event: 'before-tool-call', timeoutSeconds: 1, command: sh('sleep 20') });
      const t = await turn('local/hooked', 'read notes', READ('notes.txt'), { text: ['ok'] });
      assert.deepEqual(toolResults(fake), [
        'Vetoed by hook local/slow: the hook failed, so the tool call is refused: it timed out after 1 s',
      ]);
      assert.equal(toolCalls(t.task)[0]?.['state'], 'vetoed');
      await unhook('local/slow');
    });
  });

  describe('in a plan', () => {
    const use = async (who: string): Promise<string> =>
      (
        await client.call(planUse, {
          action: 'local/hooks-greet',
          projects: ['local/hooked'],
          arguments: { who },
        })
      ).plan.planId;

    it('a veto of a step fails the execute phase without running it; phase hooks run', async () => {
      await hook({ name: 'local/phases', event: 'plan-phase', command: { program: 'cat' } });
      await hook({
        name: 'local/no-edits',
        event: 'before-tool-call',
        tools: ['builtin/edit-*'],
        command: sh('exit 3'),
      });
      const id = await use('Ada');
      const ex = await client.call(planExecute, { planId: id, wait: true });
      assert.equal(ex.task?.status.state, 'TASK_STATE_FAILED');
      assert.equal(ex.plan.state, 'errored');
      const task = await client.call(getTask, { id: ex.task?.id ?? '' });
      const runs = hookRuns(task);
      const veto = runs.find((r) => r['hook'] === 'local/no-edits');
      assert.deepEqual([veto?.['decision'], veto?.['exitCode']], ['deny', 3]);
      const phases = runs
        .filter((r) => r['hook'] === 'local/phases')
        .map((r) => JSON.parse(String(r['output'])) as { phase: string; state: string; from: unknown; plan: string });
      assert.deepEqual(
        phases.map((p) => [p.phase, p.state]),
        [
          ['execute', 'processing'],
          ['execute', 'errored'],
        ],
      );
      assert.equal(phases[0]?.plan, id);
      assert.deepEqual(phases[0]?.from, { phase: 'strategize', state: 'complete' });
      const st = await client.call(planStatus, { planId: id });
      assert.match(
        st.error?.message ?? '',
        /step 1 \(builtin\/edit-file\) was not run: Vetoed by hook local\/no-edits: it exited with status 3/,
      );
      await unhook('local/phases', 'local/no-edits');
    });

    it("a before-apply veto (a webhook's answer) keeps the project unchanged and says why; after-apply runs", async () => {
      const head = git(repo, 'rev-parse', 'HEAD');
      await hook({ name: 'local/freeze', event: 'before-apply', webhook: { url: receiverUrl } });
      const id = await use('Bea');
      const ex = await client.call(planExecute, { planId: id, wait: true });
      assert.equal(ex.task?.status.state, 'TASK_STATE_COMPLETED');
      const vetoed = await client.call(planApply, { planId: id, yes: true });
      assert.equal(vetoed.task?.status.state, 'TASK_STATE_FAILED');
      assert.match(
        statusText(vetoed.task),
        /^Vetoed by hook local\/freeze: the release is frozen; nothing was applied\nHint: /,
      );
      assert.equal(git(repo, 'rev-parse', 'HEAD'), head);
      assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello world\n');
      const event = JSON.parse(posted.at(-1) ?? '{}') as Record<string, any>;
      assert.equal(event['event'], 'before-apply');
      assert.equal(event['plan'], id);
      assert.deepEqual(event['changes'][0].files, [{ status: 'modified', path: 'greeting.txt' }]);
      const st = await client.call(planStatus, { planId: id });
      assert.equal(st.state, 'errored');
      const applyTask = await client.call(getTask, { id: st.tasks.apply ?? '' });
      assert.deepEqual(
        hookRuns(applyTask).map((r) => [r['hook'], r['decision'], r['status']]),
        [['local/freeze', 'deny', 200]],
      );
      // Once the hook is gone the same plan applies, and the after-apply hook is told what was applied.
      await unhook('local/freeze');
      await hook({ name: 'local/applied', event: 'after-apply', command: { program: 'cat' } });
      const applied = await client.call(planApply, { planId: id, yes: true });
      assert.equal(applied.plan.state, 'applied');
      assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello Bea\n');
      const done = await client.call(getTask, { id: applied.task?.id ?? '' });
      const [run] = hookRuns(done).filter((r) => r['hook'] === 'local/applied');
      const told = JSON.parse(String(run?.['output'])) as { event: string; applied: { commits: unknown[] } };
      assert.equal(told.event, 'after-apply');
      assert.equal(told.applied.commits.length, 1);
      await unhook('local/applied');
      git(repo, 'reset', '-q', '--hard', head);
    });
  });
});

/**
 * Per-user limits count every turn toward the user who started it (issue #40): a plan phase runs
 * as a turn of the user who started it (concurrent turns), its model's tokens are theirs (tokens
 * per day), and starting one over a limit is refused before anything is stored; a follow-up on
 * another member's task — and the model tokens of the turn it starts — count toward its sender;
 * an on-demand compaction's summary counts toward the caller, and is refused over their limit.
 * Real agent in server mode, a fake OpenAI-compatible endpoint, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makePrincipal, type Principal } from '../../src/application/index.ts';
import type { Task } from '../../src/domain/a2a.model.ts';
import { AppError } from '../../src/domain/errors.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { eventually } from '../support/eventually.ts';
import {
  createGate,
  startFakeOpenAI,
  type FakeLlm,
  type FakeReply,
  type RecordedRequest,
} from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../support/postgres.ts';

const KEY = 'sk-usage-turns-test';
process.env['USAGE_TURNS_KEY'] = KEY;

const ENGINES = [
  { name: 'sqlite', skip: (): string | false => false },
  { name: 'postgresql', skip: pgSkip },
] as const;

/** Members of the administrator's own namespace (`local/`, which holds every capability on a server). */
const member = (id: string): Principal => makePrincipal({ id, roles: { local: 'member' } });

const STRATEGY = {
  approach: 'append a greeting to README.md',
  rationale: 'the goal asks for it',
  confidence: 0.9,
  alternatives: [{ option: 'a new file', reason: 'the goal names the README' }],
  decisions: [
    {
      question: 'Where does the greeting go?',
      chosen: 'the end of README.md',
      alternatives: [{ option: 'the top', reason: 'the title stays first' }],
      confidence: 0.9,
      rationale: 'appending keeps the title',
    },
  ],
};

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AppError && err.reason === 'BUDGET_EXCEEDED', String(err));
    return String(err.details['limit']);
  }
  assert.fail('expected a refusal over a limit');
}

for (const engine of ENGINES) {
  describe(`per-user limits count plans, follow-ups and compaction on ${engine.name}`, { skip: engine.skip() }, () => {
    let app: App;
    let fake: FakeLlm;
    let db: PgTestDatabase | undefined;
    let seq = 0;
    const dirs: string[] = [];
    const owner = makePrincipal({ id: 'owner', roles: { local: 'owner' } });

    const send = async (principal: Principal, extra: { taskId?: string; contextId?: string } = {}) => {
      const r = await app.facade.tasks.send(
        {
          message: { messageId: `u-${++seq}`, role: 'ROLE_USER', parts: [{ text: 'hello' }], ...extra },
          configuration: { returnImmediately: true },
        },
        principal,
      );
      assert.ok('task' in r, JSON.stringify(r));
      return r.task;
    };
    /** The task once it reaches `state` (the last state it had, when it never does). */
    const settled = async (id: string, principal: Principal, state: Task['status']['state']): Promise<Task> => {
      let last: Task | undefined;
      try {
        return await eventually(
          async () => {
            last = await app.facade.tasks.get(id, 0, principal);
            return last.status.state === state ? last : undefined;
          },
          10_000,
          `task ${id} ${state}`,
        );
      } catch (err) {
        assert.fail(`${String(err)}: it is ${last?.status.state} (${JSON.stringify(last?.status.message?.parts)})`);
      }
    };
    const used = async (user: string): Promise<number> =>
      app.storage.quota.tokensSince(user, new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString());

    before(async () => {
      if (engine.name === 'postgresql') db = await createPgDatabase('ca_limits_turns');
      const dataDir = mkdtempSync(join(tmpdir(), 'ca-limits-turns-'));
      const work = mkdtempSync(join(tmpdir(), 'ca-limits-turns-repo-'));
      dirs.push(dataDir, work);
      fake = await startFakeOpenAI({ expectKey: KEY });
      app = await buildApp({
        dataDir,
        defaultActor: 'builtin/conformance',
        card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
        usageLimits: { requestsPerMinute: 0, concurrentTurns: 1, tokensPerDay: 1000 },
        ...(db ? { databaseUrl: db.url } : {}),
      });
      const repo = join(work, 'repo');
      initRepo(repo, { 'README.md': '# hi\n' });
      const add = (kind: 'actor' | 'resource' | 'project', definition: Record<string, unknown>) =>
        app.facade.registry.add(kind, { definition }, owner);
      await add('actor', {
        name: 'local/gpt',
        provider: 'openai-compatible',
        model: 'fake-model',
        baseUrl: fake.url,
        apiKeyEnv: 'USAGE_TURNS_KEY',
        maxRetries: 0,
        tools: ['builtin/write-file'],
      });
      await add('resource', { name: 'local/repo', type: 'git-checkout', path: repo });
      await add('project', { name: 'local/repo', resources: ['local/repo'] });
    });
    after(async () => {
      await app?.close();
      await fake?.close();
      await db?.drop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('a plan phase runs as a turn of the user who started it, its tokens are theirs, and one over a limit is refused before anything is stored', async () => {
      const alice = member('alice');
      const gate = createGate();
      fake.reply((req: RecordedRequest): FakeReply => {
        const tools = ((req.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map(
          (t) => t.function.name,
        );
        assert.ok(tools.includes('submit_strategy'), `a strategy step: ${tools.join(', ')}`);
        return {
          toolCalls: [{ id: 'call_s', name: 'submit_strategy', arguments: JSON.stringify(STRATEGY) }],
          usage: { input: 600, output: 400 },
          gate: gate.promise,
        };
      });
      const before = fake.generations.length;
      const run = await app.facade.plans.use(
        { goal: 'greet the reader', projects: ['local/repo'], actor: 'local/gpt', wait: false },
        alice,
      );
      await eventually(async () => (fake.generations.length > before ? true : undefined), 10_000, 'the strategy step');
      // While it strategizes, it is alice's one running turn: her chat and a second plan are refused.
      assert.equal(await refusal(send(alice)), 'concurrentTurns');
      const plans = async () => (await app.facade.planQueries.list({}, alice)).plans.length;
      const count = await plans();
      assert.equal(
        await refusal(app.facade.plans.use({ goal: 'another', projects: ['local/repo'], actor: 'local/gpt' }, alice)),
        'concurrentTurns',
      );
      assert.equal(await plans(), count, 'the refused plan was not stored');
      // Another member is not held back by it.
      const bobs = await send(member('bob'));
      await app.facade.tasks.cancel(bobs.id, member('bob'));
      gate.release();
      await settled(run.taskId, alice, 'TASK_STATE_COMPLETED');
      // The strategy's 1,000 tokens are alice's: her next turn is refused for the day.
      assert.equal(await used('alice'), 1000);
      assert.equal(await refusal(send(alice)), 'tokensPerDay');
      assert.equal(
        await refusal(app.facade.plans.execute(run.plan.planId, { wait: false }, alice)),
        'tokensPerDay',
        'a phase that asks the model',
      );
      const status = await app.facade.planQueries.status(run.plan.planId, alice);
      assert.equal(`${status.phase}/${status.state}`, 'strategize/complete', 'the refused execute changed nothing');
    });

    it("a follow-up on another member's task is its sender's turn, and the model tokens it uses are theirs", async () => {
      const erin = member('erin');
      const frank = member('frank');
      // Erin's turn asks to write a file (builtin/manual asks first): 20 tokens, then input-required.
      fake.push({
        toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"hi.txt","content":"hi\\n"}' }],
        usage: { input: 10, output: 10 },
      });
      const session = await app.facade.sessions.create({ actor: 'local/gpt', project: 'local/repo' }, erin);
      const asked = await send(erin, { contextId: session.id });
      await settled(asked.id, erin, 'TASK_STATE_INPUT_REQUIRED');
      // Frank answers it; the rest of the turn (1,000 tokens) is his.
      fake.push({ text: ['written'], usage: { input: 500, output: 500 } });
      await send(frank, { taskId: asked.id, contextId: session.id });
      await settled(asked.id, frank, 'TASK_STATE_COMPLETED');
      assert.equal(await used('erin'), 20);
      assert.equal(await used('frank'), 1000);
      assert.equal(await refusal(send(frank)), 'tokensPerDay');
      const erins = await send(erin);
      await app.facade.tasks.cancel(erins.id, erin);
    });

    it("a follow-up on another member's running task makes it the sender's running turn", async () => {
      const gina = member('gina');
      const hal = member('hal');
      // builtin/conformance keeps a task WORKING, taking follow-ups, until it is cancelled.
      const task = await send(gina);
      assert.equal(await refusal(send(gina)), 'concurrentTurns');
      await send(hal, { taskId: task.id });
      // The running task's turn is hal's now: gina may start one, hal may not start another.
      assert.equal(await refusal(send(hal)), 'concurrentTurns');
      const ginas = await send(gina);
      await app.facade.tasks.cancel(ginas.id, gina);
      await app.facade.tasks.cancel(task.id, hal);
    });

    it("an on-demand compaction's summary counts toward the caller, and is refused over their limit before the model is asked", async () => {
      const ivy = member('ivy');
      const session = await app.facade.sessions.create({ actor: 'local/gpt' }, ivy);
      for (const text of ['first answer', 'second answer']) {
        fake.push({ text: [text], usage: { input: 1, output: 1 } });
        const t = await send(ivy, { contextId: session.id });
        await settled(t.id, ivy, 'TASK_STATE_COMPLETED');
      }
      assert.equal(await used('ivy'), 4);
      fake.push({ text: ['the summary'], usage: { input: 700, output: 296 } });
      await app.facade.compaction.compact(session.id, ivy, { keepTurns: 1 });
      assert.equal(await used('ivy'), 1000);
      const asked = fake.generations.length;
      assert.equal(await refusal(app.facade.compaction.compact(session.id, ivy, { keepTurns: 0 })), 'tokensPerDay');
      assert.equal(fake.generations.length, asked, 'no model was asked');
    });
  });
}

/**
 * The execute phase of a plan from a goal, end to end below the service: a real PlanEngine on real
 * SQLite stores (plans, tasks, transcripts), real git sandboxes and tools, the real provider adapter
 * against a fake OpenAI-compatible server scripted per test, and a stub context service.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { AssembledContext, ContextProvider } from '../../../../src/application/context/context.types.ts';
import { PlanEngine } from '../../../../src/application/plans/plan-engine.service.ts';
import { PlanRecorder, type TaskHandle } from '../../../../src/application/plans/plan.recorder.ts';
import type { HookInvocation, HookOutcome, Logger } from '../../../../src/application/index.ts';
import { HookService } from '../../../../src/application/hooks/hook.service.ts';
import { HookDefinition } from '../../../../src/domain/registry/hook.ts';
import type { Artifact, TaskState } from '../../../../src/domain/a2a.model.ts';
import { CONTEXT_DEFAULTS } from '../../../../src/domain/context/context.ts';
import { copyPlan, type Decision, type Plan } from '../../../../src/domain/plan/plan.ts';
import { BUILTIN_ACTIONS } from '../../../../src/domain/registry/builtins.ts';
import {
  AiSdkLanguageModels,
  AjvSchemaValidator,
  BuiltinToolRunner,
  CommandConfinement,
  EnvFileApiKeys,
  GitSandboxManager,
  GptTokenCounter,
  openDatabase,
  SqlitePlanRepository,
  SqliteTaskRepository,
  SqliteTranscriptStore,
} from '../../../../src/infrastructure/index.ts';
import {
  createGate,
  startFakeOpenAI,
  type FakeLlm,
  type FakeReply,
  type RecordedRequest,
} from '../../../support/fake-llm.ts';
import { git, makeRepo, read, rmrf, tmpDir } from '../../../unit/infrastructure/fixtures/repos.ts';
import { fakeRegistry } from '../../../support/fake-registry.ts';

const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const KEY = 'sk-plan-exec-test';
const ORIGINAL = "export const parse = (s) => s.split('/');\n";
const VERIFY = 'grep -q fixed src/date.js';

interface Handle extends TaskHandle {
  states: TaskState[];
  texts: string[];
  data: unknown[];
  artifacts: Artifact[];
  abort: AbortController;
}

interface Setup {
  engine: PlanEngine;
  recorder: PlanRecorder;
  fake: FakeLlm;
  plans: SqlitePlanRepository;
  repo: string;
  plan: Plan;
  root: Decision;
  handle(id: string): Promise<Handle>;
  load(): Promise<Plan>;
}

/** A stub context service: one fixed fragment, and what it was asked. */
function stubContext(asked: unknown[]): ContextProvider {
  return {
    assemble: async (input) => {
      asked.push(input);
      const ctx: AssembledContext = {
        project: input.project,
        view: input.view,
        goal: input.goal,
        settings: CONTEXT_DEFAULTS,
        budget: {
          modelWindow: input.modelWindow ?? 8192,
          reserves: CONTEXT_DEFAULTS.reserves,
          available: 4000,
          source: 'window',
          used: 12,
        },
        inventory: [{ resource: 'local/app', files: 2, bytes: 100 }],
        instructions: [],
        files: [
          {
            resource: 'local/app',
            path: 'src/date.js',
            bytes: ORIGINAL.length,
            tokens: 12,
            score: 3,
            why: [],
            included: true,
          },
        ],
        cut: {},
        totals: { included: 1, includedTokens: 12, includedBytes: ORIGINAL.length, excluded: 1 },
        snapshot: 'snap-date-1',
        dryRun: false,
        instructionFragments: [],
        fragments: [{ resource: 'local/app', path: 'src/date.js', tokens: 12, text: ORIGINAL }],
      };
      return ctx;
    },
    chatContext: () => Promise.reject(new Error('a plan step never asks for a chat context')),
  };
}

async function setup(
  t: TestContext,
  opts: {
    profile?: string;
    verify?: boolean;
    budget?: Partial<Plan['budget']>;
    key?: string;
    maxToolSteps?: number;
    verifyCommand?: string;
    policy?: Plan['policy'];
    noLlm?: boolean;
    hooks?: HookService;
  } = {},
): Promise<Setup> {
  const repo = makeRepo();
  fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'src', 'date.js'), ORIGINAL);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'date parsing');
  const data = tmpDir('plan-exec');
  const fake = await startFakeOpenAI({ expectKey: KEY });
  const db = await openDatabase({ file: ':memory:', logger });
  t.after(async () => {
    await fake.close();
    await db.close();
    rmrf(repo, data);
  });
  const definitions: Record<string, unknown> = {
    'actor:local/exec': {
      name: 'local/exec',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'EXEC_KEY',
      contextWindow: 32_000,
      maxTokens: 1000,
      timeoutSeconds: 10,
      maxRetries: 0,
      ...(opts.maxToolSteps ? { maxToolSteps: opts.maxToolSteps } : {}),
    },
    'resource:local/app': { name: 'local/app', type: 'git-checkout', path: repo },
    'project:local/api': { name: 'local/api', resources: ['local/app'] },
    'action:builtin/goal': BUILTIN_ACTIONS.find((a) => a.name === 'builtin/goal'),
  };
  const registry = fakeRegistry(definitions);
  const plans = new SqlitePlanRepository(db);
  const tasks = new SqliteTaskRepository(db);
  const transcripts = new SqliteTranscriptStore(db);
  const sandboxes = new GitSandboxManager({ root: path.join(data, 'sandboxes') });
  const recorder = new PlanRecorder({ plans, sandboxes, hooks: opts.hooks, logger });
  const engine = new PlanEngine({
    recorder,
    plans,
    registry,
    sandboxes,
    tools: new BuiltinToolRunner({ confinement: CommandConfinement.unconfined() }),
    logger,
    commandTimeoutMs: 20_000,
    hooks: opts.hooks,
    llm: opts.noLlm
      ? undefined
      : {
          models: new AiSdkLanguageModels({ retryBaseMs: 10 }),
          keys: new EnvFileApiKeys({ env: { EXEC_KEY: opts.key ?? KEY } }),
          tokens: new GptTokenCounter(),
          validator: new AjvSchemaValidator(),
          context: stubContext([]),
          transcripts,
        },
  });
  const at = new Date().toISOString();
  const plan: Plan = {
    id: 'P1',
    name: 'goal on local/api',
    action: 'builtin/goal',
    projects: ['local/api'],
    arguments: { goal: 'fix the failing date parsing test' },
    description: 'fix the failing date parsing test',
    definitionOfDone: 'the date parsing test passes',
    automationProfile: opts.profile ?? 'builtin/trusted',
    ...(opts.policy ? { policy: opts.policy } : {}),
    phase: 'strategize',
    state: 'complete',
    attempt: 1,
    contextId: 'plan-ctx-P1',
    tasks: {},
    owner: 'alice',
    createdAt: at,
    updatedAt: at,
    budget: { maxToolCalls: 50, maxWallMs: 600_000, ...opts.budget },
    usage: { toolCalls: 0, wallMs: 0, tokens: 0, costUsd: 0 },
    cursor: 0,
    stepsTotal: 0,
    sandboxes: [],
    network: 'none',
    actors: {
      strategy: 'local/exec',
      execution: 'local/exec',
      source: { strategy: 'flag', execution: 'flag' },
    },
    invariants: [
      { text: 'Keep the public API of src/date.js', source: 'project', from: 'local/api' },
      { text: 'Do not delete, skip or weaken tests to make a check pass.', source: 'global' },
    ],
    ...(opts.verify === false
      ? {}
      : { verify: { command: opts.verifyCommand ?? VERIFY, timeoutSeconds: 20, source: 'project local/api' } }),
  };
  await plans.create(plan);
  const root = await recorder.record(plan, {
    type: 'strategy',
    question: 'How to reach: the date parsing test passes',
    chosen: 'fix the separator in parse',
    rationale: 'the test feeds ISO dates',
  });
  await recorder.record(plan, {
    type: 'choice',
    parentId: root.id,
    question: 'Which file holds the bug?',
    chosen: 'src/date.js',
    alternatives: ['test/date.test.js'],
    rationale: 'parse lives there',
  });
  await recorder.record(plan, {
    type: 'choice',
    parentId: root.id,
    question: 'Which separator?',
    chosen: 'a dash',
    rationale: 'ISO 8601 dates use dashes',
  });
  await recorder.record(plan, {
    type: 'guidance',
    parentId: root.id,
    question: 'Guidance from the user',
    chosen: 'mark the fix with a comment saying fixed',
    rationale: 'mark the fix with a comment saying fixed',
  });
  return {
    engine,
    recorder,
    fake,
    plans,
    repo,
    plan,
    root,
    async handle(id) {
      await tasks.create(
        { id, contextId: plan.contextId, status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() } },
        'alice',
      );
      const abort = new AbortController();
      const h: Handle = {
        states: [],
        texts: [],
        data: [],
        artifacts: [],
        abort,
        task: { id, contextId: plan.contextId, status: { state: 'TASK_STATE_WORKING' } },
        signal: abort.signal,
        status: async (state, text, extra) => {
          h.states.push(state);
          h.texts.push(text ?? '');
          h.data.push(extra?.data);
        },
        artifact: async (a) => void h.artifacts.push(structuredClone(a)),
        // The task was created above, before the handle.
        stored: async () => {},
      };
      return h;
    },
    load: async () => (await plans.get('P1')) as Plan,
  };
}

const call = (name: string, args: unknown, id = `call_${name}`): FakeReply => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
  usage: { input: 20, output: 5 },
});
const finish = (done: boolean, assessment: string, confidence = 0.9): FakeReply =>
  call('finish', { done, assessment, confidence }, 'call_finish');

/** The request's messages (OpenAI chat format). */
const messagesOf = (r: RecordedRequest | undefined): Array<Record<string, unknown>> =>
  (r?.body as { messages?: Array<Record<string, unknown>> } | undefined)?.messages ?? [];
const contentOf = (m: Record<string, unknown> | undefined): string => {
  const c = m?.['content'];
  return typeof c === 'string' ? c : JSON.stringify(c ?? '');
};
const systemOf = (r: RecordedRequest | undefined): string => contentOf(messagesOf(r)[0]);
const toolResults = (r: RecordedRequest | undefined): string[] =>
  messagesOf(r)
    .filter((m) => m['role'] === 'tool')
    .map(contentOf);
const textOfArtifact = (h: Handle, id: string): string =>
  h.artifacts
    .filter((a) => a.artifactId === id)
    .flatMap((a) => a.parts.map((p) => p.text ?? ''))
    .join('');

const EDIT = { path: 'src/date.js', edits: [{ oldText: "s.split('/')", newText: "s.split('-') /* fixed */" }] };

describe('the execute phase of a plan from a goal', () => {
  it('reads a file, edits it and runs the verify command: done met, the edit in the diff, every call recorded and checkpointed', async (t) => {
    const s = await setup(t);
    s.fake.push(
      { text: ['Reading ', 'the file.'], ...call('builtin__read', { path: 'src/date.js' }) },
      call('builtin__edit', EDIT),
      finish(true, 'parse now splits on dashes'),
    );
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });

    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    const plan = await s.load();
    assert.equal(`${plan.phase}/${plan.state}`, 'execute/complete');
    assert.equal(plan.done?.met, true);
    assert.equal(plan.done?.by, 'verify');
    assert.deepEqual(plan.done?.verify && { ...plan.done.verify, summary: '' }, {
      command: VERIFY,
      exitCode: 0,
      ok: true,
      summary: '',
    });
    assert.equal(plan.done?.assessment, 'parse now splits on dashes');
    assert.equal(plan.usage.toolCalls, 2);
    assert.equal(plan.usage.tokens, 3 * 25);
    assert.match(h.texts.at(-1) ?? '', /^Executed 2 tool calls: 1 file changed \(\+1 −1\); definition of done met/);

    // The work is in the sandbox (and its diff), not in the user's directory.
    assert.equal(read(s.repo, 'src/date.js'), ORIGINAL);
    const diff = h.artifacts.find((a) => a.artifactId === 'diff');
    assert.match(diff?.parts[0]?.text ?? '', /\+export const parse = \(s\) => s\.split\('-'\) \/\* fixed \*\//);

    const calls = await s.plans.toolCalls('P1');
    assert.deepEqual(
      calls.map((c) => [c.tool, c.ok]),
      [
        ['builtin/read', true],
        ['builtin/edit', true],
        ['builtin/run-command', true],
      ],
    );
    assert.deepEqual(calls[1]?.filesTouched, ['src/date.js']);
    assert.equal(calls[1]?.policy?.decision, 'allow');
    assert.equal(calls[2]?.exitCode, 0);
    const checkpoints = await s.plans.checkpoints('P1');
    assert.deepEqual(
      checkpoints.map((c) => c.label),
      ['before-execute', 'after-call:1', 'before-verify', 'before-apply'],
    );
    assert.equal(calls[1]?.checkpointId, checkpoints[1]?.id);
    assert.equal(calls[0]?.checkpointId, undefined, 'a read is not checkpointed');
    assert.equal(
      h.artifacts.filter((a) => a.artifactId === 'execution-log').length,
      3,
      'each call in the execution log',
    );

    // The assessment decision, with the context it saw and the verify result.
    const assessment = (await s.plans.decisions('P1')).find((d) => d.type === 'assessment');
    assert.equal(assessment?.chosen, 'met');
    assert.equal(assessment?.parentId, s.root.id);
    assert.equal(assessment?.confidence, 0.9);
    assert.equal(plan.done?.decisionId, assessment?.id);
    assert.match(
      assessment?.rationale ?? '',
      /parse now splits on dashes[\s\S]*verify `grep -q fixed src\/date\.js` exited 0/,
    );
    assert.equal((assessment?.context['snapshot'] as { snapshot?: string } | undefined)?.snapshot, 'snap-date-1');

    // What the model was told: the system prompt, and the read file's content in the next step.
    const system = systemOf(s.fake.generations[0]);
    for (const expected of [
      'Goal: fix the failing date parsing test',
      'Definition of done: the date parsing test passes',
      '- Keep the public API of src/date.js (project local/api)',
      '- Do not delete, skip or weaken tests to make a check pass. (global)',
      `Verify command: \`${VERIFY}\``,
      'Which file holds the bug? → src/date.js. Why: parse lives there',
      'Which separator? → a dash. Why: ISO 8601 dates use dashes',
      '- mark the fix with a comment saying fixed',
      `--- src/date.js ---\n${ORIGINAL}`,
    ])
      assert.ok(system.includes(expected), `the system prompt says ${expected}:\n${system}`);
    assert.ok(system.indexOf('Which file holds the bug?') < system.indexOf('Which separator?'), 'the choices in order');
    assert.match(toolResults(s.fake.generations[1])[0] ?? '', /split\('\/'\)/);
    const tools = (s.fake.generations[0]?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
    assert.ok(tools.some((x) => x.function.name === 'finish'));
    assert.ok(tools.some((x) => x.function.name === 'builtin__edit'));

    // Live progress: status lines and the model's words.
    assert.ok(h.texts.includes('Step 1: builtin/read path=src/date.js'), h.texts.join('\n'));
    assert.ok(h.texts.some((x) => /^ {2}✓ .*checkpoint /.test(x)));
    assert.equal(textOfArtifact(h, 'execution'), 'Reading the file.');
  });

  it('says plainly that the definition of done is NOT met when the verify command fails', async (t) => {
    const s = await setup(t);
    s.fake.push(
      call('builtin__edit', { ...EDIT, edits: [{ oldText: "s.split('/')", newText: "s.split('-')" }] }),
      finish(true, 'done, I think'),
    );
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });

    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.match(h.texts.at(-1) ?? '', /definition of done NOT met: verify `grep -q fixed src\/date\.js` exited 1/);
    const plan = await s.load();
    assert.equal(plan.done?.met, false);
    assert.equal(plan.done?.by, 'verify');
    assert.equal(plan.done?.verify?.exitCode, 1);
    const assessment = (await s.plans.decisions('P1')).find((d) => d.type === 'assessment');
    assert.equal(assessment?.chosen, 'not met');
  });

  it('without a verify command, the actor that stops calling tools has not met the definition of done', async (t) => {
    const s = await setup(t, { verify: false });
    s.fake.push({ text: ['I could not find the bug.'], usage: { input: 10, output: 5 } });
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    const plan = await s.load();
    assert.equal(`${plan.phase}/${plan.state}`, 'execute/complete');
    assert.deepEqual(
      [plan.done?.met, plan.done?.by, plan.done?.assessment],
      [false, 'assessment', 'I could not find the bug.'],
    );
    assert.match(h.texts.at(-1) ?? '', /definition of done NOT met: the actor stopped without calling finish/);
  });

  it('"always" on an approval covers the later calls of the same tool in the run; they are not asked', async (t) => {
    const s = await setup(t, { profile: 'builtin/manual', verify: false });
    s.fake.push(call('builtin__write', { path: 'a.txt', content: 'a\n' }, 'call_a'));
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    let plan = await s.load();
    assert.equal(plan.waiting?.request['callId'], 'call_a');
    s.fake.push(call('builtin__write', { path: 'b.txt', content: 'b\n' }, 'call_b'), finish(true, 'wrote both'));
    const waiting = { kind: 'tool-approval' as const, decisionId: s.root.id, callId: 'call_a' };
    await s.engine.answer('P1', { decision: 'approve', always: 'tool' }, h, waiting);
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    plan = await s.load();
    const root = plan.sandboxes[0]?.root ?? '';
    assert.deepEqual([read(root, 'a.txt'), read(root, 'b.txt')], ['a\n', 'b\n'], 'b.txt was written without asking');
    const approval = (await s.plans.decisions('P1')).find((d) => d.type === 'approval');
    assert.equal(approval?.context['always'], 'tool', 'the "always" is recorded with the approval');
  });

  it('under builtin/manual a write waits for approval; approve runs it, reject with guidance tells the model', async (t) => {
    const s = await setup(t, { profile: 'builtin/manual' });
    s.fake.push(
      call('builtin__read', { path: 'src/date.js' }),
      call('builtin__write', { path: 'notes.txt', content: 'first\n' }, 'call_w1'),
    );
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });

    assert.equal(h.states.at(-1), 'TASK_STATE_INPUT_REQUIRED', h.texts.join('\n'));
    assert.equal(
      h.texts.at(-1),
      'Approve step 2: builtin/write path=notes.txt?\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,1 @@\n+first\n (approve / always / reject / reject with guidance)',
    );
    let plan = await s.load();
    assert.equal(plan.waiting?.kind, 'tool-approval');
    assert.match(String(plan.waiting?.request['diff']), /^\+first$/m, 'the approval carries the diff against the file');
    assert.equal(plan.waiting?.taskId, 'T1');
    assert.equal(plan.waiting?.decisionId, s.root.id);
    assert.deepEqual(
      [plan.waiting?.request['tool'], plan.waiting?.request['callId'], plan.waiting?.request['step']],
      ['builtin/write', 'call_w1', 2],
    );
    assert.deepEqual((h.data.at(-1) as { approvalRequest?: unknown }).approvalRequest, plan.waiting?.request);
    assert.equal(plan.usage.toolCalls, 1, 'the read ran without asking');
    const sandboxRoot = plan.sandboxes[0]?.root ?? '';
    assert.equal(fs.existsSync(path.join(sandboxRoot, 'notes.txt')), false, 'nothing written before the approval');

    // Reject with guidance: the model is told, and writes elsewhere (asked again).
    s.fake.reply((req) =>
      toolResults(req).some((r) => r.includes('They said: write it to other.txt instead'))
        ? call('builtin__write', { path: 'other.txt', content: 'second\n' }, 'call_w2')
        : { error: { status: 400, message: 'unexpected request' } },
    );
    const first = { kind: 'tool-approval' as const, decisionId: s.root.id, callId: plan.waiting?.request['callId'] };
    await s.engine.answer('P1', { decision: 'reject', guidance: 'write it to other.txt instead' }, h, first);
    assert.equal(h.states.at(-1), 'TASK_STATE_INPUT_REQUIRED', h.texts.join('\n'));
    plan = await s.load();
    assert.equal(plan.waiting?.request['callId'], 'call_w2');
    assert.equal(fs.existsSync(path.join(sandboxRoot, 'notes.txt')), false, 'a rejected call does not run');
    const rejected = (await s.plans.toolCalls('P1')).find((c) => c.tool === 'builtin/write');
    assert.deepEqual([rejected?.ok, rejected?.summary], [false, 'rejected by the user: write it to other.txt instead']);

    // A second answer to the first call (sent at the same time as the first) answers nothing.
    await s.engine.answer('P1', { decision: 'approve' }, h, first);
    assert.equal(
      (await s.load()).waiting?.request['callId'],
      'call_w2',
      'the answer to call_w1 did not approve call_w2',
    );
    assert.equal(fs.existsSync(path.join(sandboxRoot, 'other.txt')), false);

    // Approve: the write runs and the run goes on to its end.
    s.fake.reply(() => finish(true, 'wrote other.txt'));
    await s.engine.answer('P1', { decision: 'approve' }, h, {
      kind: 'tool-approval',
      decisionId: s.root.id,
      callId: 'call_w2',
    });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.equal(read(sandboxRoot, 'other.txt'), 'second\n');
    plan = await s.load();
    assert.equal(plan.waiting, undefined);
    assert.equal(plan.usage.toolCalls, 2);
    const approvals = (await s.plans.decisions('P1')).filter((d) => d.type === 'approval');
    assert.deepEqual(
      approvals.map((d) => [d.chosen, d.parentId]),
      [
        ['reject', s.root.id],
        ['approve', s.root.id],
      ],
    );
    // The continued conversation is the same one: the approved call's result follows its call.
    const last = s.fake.generations.at(-1);
    assert.ok(
      toolResults(last).some((r) => r.includes('other.txt')),
      JSON.stringify(messagesOf(last)),
    );
    assert.ok(messagesOf(last).some((m) => m['role'] === 'user' && contentOf(m).includes('Carry out the strategy')));
  });

  it('a finish in the same step as a call that waits for approval ends the run once the call is answered', async (t) => {
    const s = await setup(t, { profile: 'builtin/manual', verify: false });
    s.fake.push({
      toolCalls: [
        { id: 'call_f', name: 'finish', arguments: JSON.stringify({ done: true, assessment: 'wrote a.txt' }) },
        { id: 'call_w', name: 'builtin__write', arguments: JSON.stringify({ path: 'a.txt', content: 'a\n' }) },
      ],
    });
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    assert.equal(h.states.at(-1), 'TASK_STATE_INPUT_REQUIRED', h.texts.join('\n'));
    await s.engine.answer('P1', { decision: 'approve' }, h, {
      kind: 'tool-approval',
      decisionId: s.root.id,
      callId: 'call_w',
    });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.equal(s.fake.generations.length, 1, 'no further model step');
    const plan = await s.load();
    assert.deepEqual([plan.done?.met, plan.done?.assessment], [true, 'wrote a.txt']);
    assert.equal(read(plan.sandboxes[0]?.root ?? '', 'a.txt'), 'a\n');
  });

  it('a token budget stops the model mid-answer, constrained with the work kept; resuming with a raised budget finishes it', async (t) => {
    // The first step's prompt (~1.1k tokens as counted) fits; the second step's long answer does not.
    const s = await setup(t, { budget: { maxTokens: 2000 }, verify: false });
    const words = Array.from({ length: 1000 }, (_, i) => `word${i} `);
    s.fake.push(
      { ...call('builtin__write', { path: 'a.txt', content: 'kept\n' }), usage: { input: 30, output: 10 } },
      {
        text: words,
        ...call('builtin__write', { path: 'b.txt', content: 'never\n' }),
        usage: { input: 30, output: 10 },
      },
    );
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });

    assert.equal(h.states.at(-1), 'TASK_STATE_FAILED');
    let plan = await s.load();
    assert.equal(`${plan.phase}/${plan.state}`, 'execute/constrained', JSON.stringify(plan.error));
    assert.equal(plan.error?.kind, 'budget');
    assert.match(plan.error?.message ?? '', /budget exceeded: 20\d\d of 2000 tokens used/);
    const said = textOfArtifact(h, 'execution');
    assert.match(said, /word0 /, 'the partial answer is kept');
    assert.doesNotMatch(said, /word999/, 'the stream was stopped before its end');
    const root = plan.sandboxes[0]?.root ?? '';
    assert.equal(read(root, 'a.txt'), 'kept\n');
    assert.equal(fs.existsSync(path.join(root, 'b.txt')), false, 'the call after the overrun did not run');
    assert.equal((await s.plans.checkpoints('P1')).at(-1)?.label, 'constrained');

    // The stored record, as a larger budget leaves it.
    const raised = copyPlan(plan);
    raised.budget.maxTokens = 10_000;
    await s.plans.save(raised);
    s.fake.push(finish(true, 'a.txt holds the work'));
    const h2 = await s.handle('T2');
    await s.engine.execute('P1', h2, { yes: false });
    assert.equal(h2.states.at(-1), 'TASK_STATE_COMPLETED', h2.texts.join('\n'));
    plan = await s.load();
    assert.equal(plan.done?.met, true);
    assert.equal(read(root, 'a.txt'), 'kept\n', 'the resumed run starts from the work so far');
    const opening = contentOf(messagesOf(s.fake.generations.at(-1))[1]);
    assert.match(opening, /resumes earlier work: the sandbox already holds the work so far/);
    assert.match(opening, /\+kept/);
    assert.match(opening, /The previous run stopped: budget exceeded: \d+ of 2000 tokens used/);
  });

  it('a model that has used every tool call of the budget may still finish', async (t) => {
    const s = await setup(t, { verify: false, budget: { maxToolCalls: 1 } });
    s.fake.push(call('builtin__edit', EDIT), finish(true, 'one edit was enough'));
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.equal((await s.load()).usage.toolCalls, 1);
  });

  it('tells the model when its arguments are off-schema, and the next call works', async (t) => {
    const s = await setup(t, { verify: false });
    s.fake.push(
      call('builtin__write', { path: 'a.txt' }),
      call('builtin__write', { path: 'a.txt', content: 'ok\n' }),
      finish(true, 'wrote a.txt'),
    );
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.match(toolResults(s.fake.generations[1])[0] ?? '', /do not match the tool's input schema: .*content/);
    const calls = await s.plans.toolCalls('P1');
    assert.deepEqual(
      calls.map((c) => c.ok),
      [false, true],
    );
    assert.match(calls[0]?.summary ?? '', /^not run: /);
    const plan = await s.load();
    assert.equal(read(plan.sandboxes[0]?.root ?? '', 'a.txt'), 'ok\n');
    assert.equal(plan.usage.toolCalls, 1, 'a refused call is not counted');
  });

  it('stops errored after three steps in a row of only invalid calls', async (t) => {
    const s = await setup(t, { verify: false });
    for (let i = 0; i < 3; i++) s.fake.push(call('no_such_tool', {}));
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    const plan = await s.load();
    assert.equal(`${plan.phase}/${plan.state}`, 'execute/errored');
    assert.equal(plan.error?.kind, 'actor');
    assert.match(
      plan.error?.message ?? '',
      /only invalid tool calls 3 steps in a row.*There is no tool named no_such_tool/,
    );
    assert.equal(s.fake.generations.length, 3);
  });

  it('a provider 401 stops the phase errored with the actor kind and a hint', async (t) => {
    const s = await setup(t, { key: 'sk-wrong' });
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    assert.equal(h.states.at(-1), 'TASK_STATE_FAILED');
    const plan = await s.load();
    assert.equal(`${plan.phase}/${plan.state}`, 'execute/errored');
    assert.equal(plan.error?.kind, 'actor');
    assert.match(plan.error?.message ?? '', /^local\/exec failed: /);
    assert.match(plan.error?.hint ?? '', /then run the phase again$/);
    assert.match(h.texts.at(-1) ?? '', /\nHint: /);
    assert.equal(plan.sandboxes.length, 1, 'the sandbox stays');
  });

  it('at the step limit the actor gets one last step without tools, and its summary is the assessment', async (t) => {
    const s = await setup(t, { verify: false, maxToolSteps: 2 });
    s.fake.push(call('builtin__git-status', {}), call('builtin__git-status', {}), {
      text: ['I looked at the status twice; the fix is still to do.'],
    });
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    const plan = await s.load();
    assert.equal(`${plan.phase}/${plan.state}`, 'execute/complete', h.texts.join('\n'));
    assert.equal(plan.done?.met, false, 'no verify and no finish: not done');
    assert.match(plan.done?.assessment ?? '', /the fix is still to do[\s\S]*used its 2 tool steps/);
    const last = s.fake.generations.at(-1)?.body as { tool_choice?: unknown };
    assert.equal(last.tool_choice, 'none');
  });

  it('with --yes, a write under builtin/manual runs without asking', async (t) => {
    const s = await setup(t, { profile: 'builtin/manual', verify: false });
    s.fake.push(call('builtin__write', { path: 'a.txt', content: 'yes\n' }), finish(true, 'wrote it'));
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: true });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.ok(!h.states.includes('TASK_STATE_INPUT_REQUIRED'));
    assert.equal(read((await s.load()).sandboxes[0]?.root ?? '', 'a.txt'), 'yes\n');
  });

  it("a call the plan's profile denies is told to the model and logged, and the run goes on", async (t) => {
    const s = await setup(t, {
      verify: false,
      policy: {
        profile: 'local/strict',
        revision: 1,
        contentHash: '',
        default: 'allow',
        applyApproval: true,
        rules: [{ tool: 'builtin/run-command', decision: 'deny', reason: 'no commands in this project' }],
        takenAt: new Date().toISOString(),
      },
    });
    s.fake.push(
      call('builtin__run-command', { command: 'rm -rf src' }),
      call('builtin__write', { path: 'a.txt', content: 'ok\n' }),
      finish(true, 'wrote a.txt without commands'),
    );
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.match(
      toolResults(s.fake.generations[1])[0] ?? '',
      /^Not allowed by the plan's automation profile: .*no commands in this project/,
    );
    const calls = await s.plans.toolCalls('P1');
    assert.deepEqual(
      calls.map((c) => [c.tool, c.ok, c.policy?.decision]),
      [
        ['builtin/run-command', false, 'deny'],
        ['builtin/write', true, 'allow'],
      ],
    );
    assert.match(calls[0]?.summary ?? '', /^denied by policy: /);
    const plan = await s.load();
    assert.equal(fs.existsSync(path.join(plan.sandboxes[0]?.root ?? '', 'src', 'date.js')), true, 'nothing ran');
    assert.equal(plan.usage.toolCalls, 1);
  });

  it('a before-tool-call hook vetoes a call: the model is told, the log says so, the run goes on; after hooks see the rest', async (t) => {
    const seen: HookInvocation[] = [];
    const hooks = new HookService({
      hooksOf: () =>
        Promise.resolve([
          HookDefinition.parse({
            name: 'local/no-commands',
            event: 'before-tool-call',
            project: 'local/api',
            tools: ['builtin/run-*'],
            command: { program: 'x' },
          }),
          HookDefinition.parse({ name: 'local/audit', event: 'after-tool-call', command: { program: 'x' } }),
        ]),
      projectNetwork: () => Promise.resolve(undefined),
      runner: {
        run: (inv): Promise<HookOutcome> => {
          seen.push(inv);
          return Promise.resolve(
            inv.hook.name === 'local/no-commands'
              ? { answer: '', output: 'no commands here', exitCode: 1 }
              : { answer: '', output: 'noted', exitCode: 0 },
          );
        },
      },
      logger,
    });
    const s = await setup(t, { verify: false, hooks });
    s.fake.push(
      call('builtin__run-command', { command: 'rm -rf src' }),
      call('builtin__write', { path: 'a.txt', content: 'ok\n' }),
      finish(true, 'wrote a.txt without commands'),
    );
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    assert.equal(toolResults(s.fake.generations[1])[0], 'Vetoed by hook local/no-commands: no commands here');
    const calls = await s.plans.toolCalls('P1');
    assert.deepEqual(
      calls.map((c) => [c.tool, c.ok, c.summary.startsWith('Vetoed by hook local/no-commands')]),
      [
        ['builtin/run-command', false, true],
        ['builtin/write', true, false],
      ],
    );
    const plan = await s.load();
    assert.equal(fs.existsSync(path.join(plan.sandboxes[0]?.root ?? '', 'src', 'date.js')), true, 'nothing ran');
    assert.deepEqual(
      seen.map((i) => [i.hook.name, (JSON.parse(i.payload) as { tool: string }).tool, i.workdir]),
      [
        ['local/no-commands', 'builtin/run-command', plan.sandboxes[0]?.root],
        ['local/audit', 'builtin/write', plan.sandboxes[0]?.root],
      ],
    );
    assert.deepEqual(
      h.artifacts
        .filter((a) => a.name === 'hook')
        .map((a) => {
          const d = a.parts[0]?.data as { hook: string; decision: string };
          return [d.hook, d.decision];
        }),
      [
        ['local/no-commands', 'deny'],
        ['local/audit', 'ok'],
      ],
    );
  });

  it("what the verify command changes is not kept in the plan's work", async (t) => {
    const s = await setup(t, { verifyCommand: 'sh -c "echo report > coverage.txt"' });
    s.fake.push(call('builtin__edit', EDIT), finish(true, 'fixed'));
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    assert.equal(h.states.at(-1), 'TASK_STATE_COMPLETED', h.texts.join('\n'));
    const plan = await s.load();
    assert.equal(plan.done?.met, true);
    assert.equal(fs.existsSync(path.join(plan.sandboxes[0]?.root ?? '', 'coverage.txt')), false);
    const diff = h.artifacts.find((a) => a.artifactId === 'diff')?.parts[0]?.text ?? '';
    assert.doesNotMatch(diff, /coverage\.txt/);
    assert.match(diff, /fixed/);
  });

  it('after a conflicted rebase, a resumed run keeps the conflict markers and asks first to resolve them, with the guidance since', async (t) => {
    const s = await setup(t, { verify: false, budget: { maxToolCalls: 1 } });
    s.fake.push(call('builtin__edit', EDIT), call('builtin__git-status', {}));
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    let plan = await s.load();
    assert.equal(plan.state, 'constrained');
    assert.match(plan.error?.message ?? '', /1 of 1 tool calls used/);
    // As a conflicted rebase leaves it (the rebase itself is not this phase's).
    const root = plan.sandboxes[0]?.root ?? '';
    const markers =
      "<<<<<<< HEAD\nexport const parse = (s) => s.split('.');\n=======\nexport const parse = (s) => s.split('-') /* fixed */;\n>>>>>>> plan\n";
    fs.writeFileSync(path.join(root, 'src', 'date.js'), markers);
    const conflicted = copyPlan(plan);
    conflicted.state = 'errored';
    conflicted.budget.maxToolCalls = 50;
    conflicted.error = {
      kind: 'conflict',
      message: 'rebasing onto main conflicted',
      recoverable: true,
      files: ['src/date.js'],
    };
    await s.plans.save(conflicted);
    await s.recorder.record(plan, {
      type: 'guidance',
      question: 'Guidance from the user',
      chosen: 'keep the dash separator',
      rationale: 'keep the dash separator',
    });
    s.fake.push(
      call('builtin__read', { path: 'src/date.js' }),
      call('builtin__write', {
        path: 'src/date.js',
        content: "export const parse = (s) => s.split('-') /* fixed */;\n",
      }),
      finish(true, 'resolved'),
    );
    const h2 = await s.handle('T2');
    await s.engine.execute('P1', h2, { yes: false });
    assert.equal(h2.states.at(-1), 'TASK_STATE_COMPLETED', h2.texts.join('\n'));
    const resumed = s.fake.generations.length - 3;
    const opening = contentOf(messagesOf(s.fake.generations[resumed])[1]);
    assert.match(opening, /resolve the conflict markers \(<<<<<<<, =======, >>>>>>>\) in that file/);
    assert.match(opening, /conflicts in src\/date\.js/);
    assert.match(opening, /Since then the user said:\n- keep the dash separator/);
    assert.match(
      toolResults(s.fake.generations[resumed + 1])[0] ?? '',
      /<<<<<<< HEAD/,
      'the markers were not reset away',
    );
    assert.ok(systemOf(s.fake.generations[resumed]).includes('- keep the dash separator'));
    plan = await s.load();
    assert.equal(plan.done?.met, true);
    assert.equal(read(root, 'src/date.js'), "export const parse = (s) => s.split('-') /* fixed */;\n");
  });

  it('a server without LLM providers refuses to execute a plan from a goal, with a hint', async (t) => {
    const s = await setup(t, { noLlm: true });
    const h = await s.handle('T1');
    await s.engine.execute('P1', h, { yes: false });
    const plan = await s.load();
    assert.equal(`${plan.phase}/${plan.state}`, 'execute/errored');
    assert.equal(plan.error?.kind, 'actor');
    assert.match(h.texts.at(-1) ?? '', /no LLM providers[\s\S]*Hint: /);
    assert.equal(s.fake.generations.length, 0);
  });

  it('cancelling mid-stream aborts the request and stops the run', async (t) => {
    const s = await setup(t);
    const gate = createGate();
    t.after(() => gate.release());
    s.fake.push({ text: ['Looking', ' at it', ' now'], gate: gate.promise, holdAfter: 1 });
    const h = await s.handle('T1');
    let streamed!: () => void;
    const first = new Promise<void>((r) => (streamed = r));
    const artifact = h.artifact;
    h.artifact = async (a, o) => {
      await artifact(a, o);
      if (a.artifactId === 'execution') streamed();
    };
    const running = s.engine.execute('P1', h, { yes: false });
    await first;
    h.abort.abort();
    await running;
    await s.fake.generations[0]?.closed;
    assert.equal(s.fake.generations[0]?.aborted, true);
    assert.equal(s.fake.generations.length, 1);
    assert.ok(!h.states.includes('TASK_STATE_COMPLETED'));
    const plan = await s.load();
    assert.equal(plan.done, undefined);
    assert.equal(plan.phase, 'execute');
  });
});

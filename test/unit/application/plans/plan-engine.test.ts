/**
 * PlanEngine over fakes for its ports (plan store, registry, sandbox manager, tool runner): the
 * phases' logic without git or a file system.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PlanEngine } from '../../../../src/application/plans/plan-engine.service.ts';
import { PlanRecorder, type TaskHandle } from '../../../../src/application/plans/plan.recorder.ts';
import type { Logger, PlanRecords, PlanRepository } from '../../../../src/application/index.ts';
import type {
  SandboxDiff,
  SandboxInfo,
  SandboxManager,
  ToolCallRequest,
  ToolRunner,
} from '../../../../src/application/ports/sandbox.port.ts';
import type { Checkpoint, Decision, Plan, ToolCallRecord } from '../../../../src/domain/plan/plan.ts';
import type { PolicySnapshot } from '../../../../src/domain/plan/policy.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { fakeRegistry } from '../../../support/fake-registry.ts';
import { aPlan } from '../../../support/builders.ts';

const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function memoryPlans(): PlanRepository & { records: PlanRecords } {
  const plans = new Map<string, Plan>();
  const records: PlanRecords = { decisions: [], checkpoints: [], toolCalls: [] };
  const upsert = <T extends { id: string }>(list: T[], item: T): void => {
    const i = list.findIndex((x) => x.id === item.id);
    if (i >= 0) list[i] = structuredClone(item);
    else list.push(structuredClone(item));
  };
  return {
    records,
    create: async (p) => void plans.set(p.id, structuredClone(p)),
    get: async (id) => structuredClone(plans.get(id)),
    save: async (p) => void plans.set(p.id, structuredClone(p)),
    delete: async (id) => plans.delete(id),
    list: async () => [...plans.values()].map((p) => structuredClone(p)),
    byIdPrefix: async (owner, prefix, limit) =>
      [...plans.values()]
        .filter((p) => p.owner === owner && p.id.startsWith(prefix))
        .slice(0, limit)
        .map((p) => structuredClone(p)),
    putDecision: async (d: Decision) => upsert(records.decisions, d),
    decisions: async (id) => structuredClone(records.decisions.filter((d) => d.planId === id)),
    putCheckpoint: async (c: Checkpoint) => upsert(records.checkpoints, c),
    checkpoints: async (id) => structuredClone(records.checkpoints.filter((c) => c.planId === id)),
    putToolCall: async (t: ToolCallRecord) => upsert(records.toolCalls, t),
    // As stored: the calls without their output, which is read apart.
    toolCalls: async (id) =>
      structuredClone(records.toolCalls.filter((t) => t.planId === id).map(({ output: _o, ...t }) => t)),
    toolCallOutputs: async (id, ids) =>
      new Map(
        records.toolCalls.flatMap((t) =>
          t.planId === id && ids.includes(t.id) && t.output ? [[t.id, structuredClone(t.output)] as const] : [],
        ),
      ),
    lastCommandCall: async (id) => structuredClone(records.toolCalls.filter((t) => t.planId === id && t.output).at(-1)),
    recordsOf: async () => new Map(),
    listByState: async () => [],
  };
}

const tool = (name: string, writes: boolean) => ({
  name,
  source: 'builtin',
  inputSchema: { type: 'object' },
  readOnly: !writes,
  writes,
});
const DEFINITIONS: Record<string, unknown> = {
  'tool:local/write': tool('local/write', true),
  'tool:local/read': tool('local/read', false),
  'tool:local/run': tool('local/run', true),
  'resource:local/r': { name: 'local/r', type: 'fs-directory', path: '/nowhere/r' },
  'project:local/p': { name: 'local/p', resources: ['local/r'] },
  'action:local/act': {
    name: 'local/act',
    descriptionTemplate: 'greet {{who}}',
    definitionOfDone: 'greeted',
    steps: [
      { tool: 'local/write', args: { path: 'a.txt', content: 'hello {{who}}' } },
      { tool: 'local/read', args: { path: 'a.txt' } },
      { tool: 'local/write', args: { path: 'b.txt', content: 'bye' } },
    ],
  },
  'action:local/cmd': {
    name: 'local/cmd',
    descriptionTemplate: 'test',
    definitionOfDone: 'tests pass',
    steps: [
      { tool: 'local/read', args: { path: 'a.txt' } },
      { tool: 'local/run', args: { command: 'npm test' } },
    ],
  },
};
const registry = fakeRegistry(DEFINITIONS);

/** A sandbox manager that records what it is asked; checkpoints are numbered commits. */
function fakeSandboxes(): SandboxManager & { checkpoints: string[]; created: number } {
  const diff: SandboxDiff = {
    unified: '',
    files: [{ path: 'a.txt', status: 'added', additions: 1, deletions: 0, size: 9, binary: false }],
    stats: { files: 1, additions: 1, deletions: 0 },
  };
  const self = {
    checkpoints: [] as string[],
    created: 0,
    create: async (planId: string, r: { name: string }): Promise<SandboxInfo> => {
      self.created++;
      return { resource: r.name, kind: 'copy', root: `/sandbox/${planId}`, source: `/src/${r.name}`, baseCommit: 'c0' };
    },
    checkpoint: async (_sb: SandboxInfo, label: string) => {
      self.checkpoints.push(label);
      return `c${self.checkpoints.length}`;
    },
    restore: async () => {},
    diff: async () => diff,
    apply: async () => ({ ok: true as const, commit: 'abc', files: ['a.txt'] }),
    remove: async () => {},
    rebase: async (sb: SandboxInfo) => ({ ok: true as const, moved: false, sandbox: sb, files: [] }),
    unresolved: async () => [],
    assertReachable: async () => {},
  };
  return self;
}

/** A tool runner that records each call; `failOn` names a call (1-based) that fails. */
function fakeTools(failOn?: number): ToolRunner & { calls: Array<{ tool: string; args: Record<string, unknown> }> } {
  const calls: Array<{ tool: string; args: Record<string, unknown> }> = [];
  return {
    calls,
    run: async (req: ToolCallRequest) => {
      calls.push({ tool: req.tool.name, args: req.args });
      const ok = calls.length !== failOn;
      // A command: its output and exit code, as the built-in runner reports them.
      if (req.tool.name === 'local/run')
        return {
          ok,
          summary: `npm test: exit ${ok ? 0 : 3}`,
          output: 'out\nerr\n',
          filesTouched: [],
          exitCode: ok ? 0 : 3,
          confinement: 'confined' as const,
        };
      return {
        ok,
        summary: ok ? `ran ${req.tool.name}` : 'disk full',
        output: req.tool.writes ? '' : 'the file read',
        filesTouched: req.tool.writes ? [String(req.args['path'])] : [],
      };
    },
  };
}

function handle(
  id: string,
): TaskHandle & { states: string[]; texts: string[]; artifacts: string[]; logged: unknown[] } {
  const states: string[] = [];
  const texts: string[] = [];
  const artifacts: string[] = [];
  const logged: unknown[] = [];
  return {
    states,
    texts,
    artifacts,
    logged,
    task: { id, contextId: 'plan-ctx', status: { state: 'TASK_STATE_WORKING' } },
    signal: new AbortController().signal,
    status: async (state, text) => {
      states.push(state);
      texts.push(text ?? '');
    },
    artifact: async (a) => {
      artifacts.push(a.artifactId);
      if (a.artifactId === 'execution-log') logged.push(...a.parts.map((p) => p.data));
    },
    stored: async () => {},
  };
}

function newPlan(extra: Partial<Plan> = {}): Plan {
  const at = '2026-01-01T00:00:00.000Z';
  return aPlan({
    ...{ id: 'p1', name: 'act on local/p', action: 'local/act', arguments: { who: 'Ada' }, description: 'greet Ada' },
    ...{ definitionOfDone: 'greeted', automationProfile: 'trusted', contextId: 'plan-ctx', owner: 'alice' },
    ...{ createdAt: at, updatedAt: at, budget: { maxToolCalls: 100, maxWallMs: 3_600_000 }, stepsTotal: 3 },
    ...extra,
  });
}

async function strategized(extra: Partial<Plan> = {}, failOn?: number) {
  const plans = memoryPlans();
  const sandboxes = fakeSandboxes();
  const tools = fakeTools(failOn);
  const now = () => new Date('2026-01-02T00:00:00.000Z');
  const engine = new PlanEngine({
    recorder: new PlanRecorder({ plans, sandboxes, logger, now }),
    plans,
    registry,
    sandboxes,
    tools,
    logger,
  });
  await plans.create(newPlan(extra));
  const s = handle('t-strategize');
  await engine.strategizeOn('p1', s);
  assert.equal(s.states.at(-1), 'TASK_STATE_COMPLETED', s.texts.join('\n'));
  return { plans, sandboxes, tools, engine };
}

describe('PlanEngine with fake sandboxes and tools', () => {
  it('strategize records one decision per declared step, with its arguments rendered', async () => {
    const { plans } = await strategized();
    const steps = plans.records.decisions.filter((d) => d.type === 'step');
    assert.deepEqual(
      steps.map((d) => d.chosen),
      [
        { tool: 'local/write', args: { path: 'a.txt', content: 'hello Ada' } },
        { tool: 'local/read', args: { path: 'a.txt' } },
        { tool: 'local/write', args: { path: 'b.txt', content: 'bye' } },
      ],
    );
    assert.equal(plans.records.decisions.filter((d) => d.type === 'strategy').length, 1);
  });

  it('execute runs the steps in order in the sandbox and completes the phase', async () => {
    const { plans, tools, engine, sandboxes } = await strategized();
    const t = handle('t-execute');
    await engine.execute('p1', t, { yes: false });
    assert.deepEqual(tools.calls, [
      { tool: 'local/write', args: { path: 'a.txt', content: 'hello Ada' } },
      { tool: 'local/read', args: { path: 'a.txt' } },
      { tool: 'local/write', args: { path: 'b.txt', content: 'bye' } },
    ]);
    assert.equal(sandboxes.created, 1);
    assert.equal(t.states.at(-1), 'TASK_STATE_COMPLETED');
    const plan = await plans.get('p1');
    assert.equal(`${plan?.phase}/${plan?.state}`, 'execute/complete');
    assert.equal(plan?.cursor, 3);
    assert.equal(plan?.usage.toolCalls, 3);
    assert.deepEqual(t.artifacts, ['execution-log', 'execution-log', 'execution-log', 'diff']);
  });

  it('checkpoints before execute, after each write (not after a read) and before apply', async () => {
    const { plans, engine, sandboxes } = await strategized();
    await engine.execute('p1', handle('t-execute'), { yes: false });
    assert.deepEqual(sandboxes.checkpoints, ['before-execute', 'after-step:1', 'after-step:3', 'before-apply']);
    const calls = plans.records.toolCalls;
    assert.deepEqual(
      calls.map((c) => c.checkpointId !== undefined),
      [true, false, true],
    );
    const byId = new Map(plans.records.checkpoints.map((c) => [c.id, c]));
    assert.deepEqual(
      calls.map((c) => (c.checkpointId ? byId.get(c.checkpointId)?.stepIndex : undefined)),
      [1, undefined, 3],
    );
  });

  it('stops as constrained when the tool-call budget is spent, keeping what was done', async () => {
    const { plans, tools, engine } = await strategized({ budget: { maxToolCalls: 1, maxWallMs: 3_600_000 } });
    const t = handle('t-execute');
    await engine.execute('p1', t, { yes: false });
    assert.equal(tools.calls.length, 1, 'only the first step ran');
    assert.equal(t.states.at(-1), 'TASK_STATE_FAILED');
    assert.match(t.texts.at(-1) ?? '', /budget exceeded: 1 of 1 tool calls used/);
    const plan = await plans.get('p1');
    assert.equal(`${plan?.phase}/${plan?.state}`, 'execute/constrained');
    assert.equal(plan?.error?.kind, 'budget');
    assert.equal(plan?.error?.recoverable, true);
    assert.equal(plan?.cursor, 1);
  });

  it('a failing tool call stops the phase as errored (recoverable) after logging the call', async () => {
    const { plans, tools, engine } = await strategized({}, 2);
    const t = handle('t-execute');
    await engine.execute('p1', t, { yes: false });
    assert.equal(tools.calls.length, 2);
    assert.equal(t.states.at(-1), 'TASK_STATE_FAILED');
    const plan = await plans.get('p1');
    assert.equal(`${plan?.phase}/${plan?.state}`, 'execute/errored');
    assert.equal(plan?.error?.kind, 'tool');
    assert.deepEqual(
      plans.records.toolCalls.map((c) => c.ok),
      [true, false],
    );
  });

  it('a command step keeps its output in its record (a file tool’s none), the execution log its last lines', async () => {
    const { plans, engine } = await strategized({ action: 'local/cmd', stepsTotal: 2 }, 2);
    const t = handle('t-execute');
    await engine.execute('p1', t, { yes: false });
    assert.equal((await plans.get('p1'))?.state, 'errored');
    const [read, run] = plans.records.toolCalls;
    assert.equal(read?.output, undefined, 'a read’s output is the file, not kept');
    assert.deepEqual(run?.output, { text: 'out\nerr\n', bytes: 8, truncated: false });
    assert.equal(run?.exitCode, 3);
    const [, logged] = t.logged as Array<Record<string, unknown>>;
    assert.equal(logged?.['outputTail'], 'out\nerr');
    assert.equal(logged?.['output'], undefined, 'the whole output stays in the plan’s record');
  });

  it('under the manual profile a write waits for approval and runs nothing', async () => {
    const { plans, tools, engine } = await strategized({ automationProfile: 'manual' });
    const t = handle('t-execute');
    await engine.execute('p1', t, { yes: false });
    assert.equal(tools.calls.length, 0);
    assert.equal(t.states.at(-1), 'TASK_STATE_INPUT_REQUIRED');
    const plan = await plans.get('p1');
    assert.equal(plan?.waiting?.kind, 'tool-approval');
    assert.equal(plan?.waiting?.taskId, 't-execute');
  });
});

/** A plan that keeps these rules (as `use` would have copied them from a profile). */
const underPolicy = (rules: PolicySnapshot['rules'], dflt: PolicySnapshot['default'] = 'allow'): Partial<Plan> => ({
  automationProfile: 'local/strict',
  policy: {
    profile: 'local/strict',
    revision: 1,
    contentHash: 'sha256:x',
    default: dflt,
    applyApproval: true,
    rules,
    takenAt: '2026-01-01T00:00:00.000Z',
  },
});

describe('PlanEngine under an automation profile', () => {
  it('a denied call does not run: the step fails with the rule and its reason, recorded as a failed tool call', async () => {
    const { plans, tools, engine } = await strategized(
      underPolicy([
        { tool: 'local/*', decision: 'allow' },
        { tool: 'local/write', decision: 'deny', reason: 'no writes here' },
      ]),
    );
    const t = handle('t-execute');
    await engine.execute('p1', t, { yes: true });
    assert.equal(tools.calls.length, 0, 'deny wins over the earlier allow, and over --yes');
    assert.equal(t.states.at(-1), 'TASK_STATE_FAILED');
    assert.match(
      t.texts.at(-1) ?? '',
      /step 1 \(local\/write\) was not run: rule 2 of local\/strict \(tool local\/write\) denies it — no writes here\n/,
    );
    const plan = await plans.get('p1');
    assert.equal(`${plan?.phase}/${plan?.state}`, 'execute/errored');
    assert.equal(plan?.error?.kind, 'policy');
    assert.equal(plan?.cursor, 0);
    const [call] = plans.records.toolCalls;
    assert.equal(plans.records.toolCalls.length, 1);
    assert.equal(call?.ok, false);
    assert.deepEqual(call?.filesTouched, []);
    assert.match(call?.summary ?? '', /^denied by policy: rule 2 of local\/strict/);
    assert.deepEqual(call?.policy?.rule, { index: 1, tool: 'local/write', reason: 'no writes here' });
    assert.equal(call?.policy?.decision, 'deny');
  });

  it('an ask rule makes an allow-by-default profile ask for that one call, naming the rule', async () => {
    const { plans, tools, engine } = await strategized(underPolicy([{ tool: 'local/read', decision: 'ask' }]));
    const t = handle('t-execute');
    await engine.execute('p1', t, { yes: false });
    assert.deepEqual(
      tools.calls.map((c) => c.tool),
      ['local/write'],
      'step 1 ran, step 2 waits',
    );
    assert.equal(t.states.at(-1), 'TASK_STATE_INPUT_REQUIRED');
    const plan = await plans.get('p1');
    assert.equal(plan?.waiting?.kind, 'tool-approval');
    const verdict = plan?.waiting?.request['policy'] as { decision: string; rule?: { index: number } } | undefined;
    assert.equal(verdict?.decision, 'ask');
    assert.equal(verdict?.rule?.index, 0);
    assert.equal(plans.records.toolCalls[0]?.policy?.decision, 'allow');
    assert.equal(plans.records.toolCalls[0]?.policy?.rule, undefined, 'the default decided step 1');
  });

  it('records the deciding verdict on every call that ran', async () => {
    const { plans, engine } = await strategized(underPolicy([{ writes: false, decision: 'allow', reason: 'reads' }]));
    await engine.execute('p1', handle('t-execute'), { yes: false });
    assert.deepEqual(
      plans.records.toolCalls.map((c) => [c.policy?.decision, c.policy?.rule?.index]),
      [
        ['allow', undefined],
        ['allow', 0],
        ['allow', undefined],
      ],
    );
  });

  it("a failing apply keeps an error's own hint (a remote that cannot be reached), else says to run the apply again", async () => {
    for (const [thrown, hint] of [
      [
        new AppError('UNAVAILABLE', 'Resource local/r: the remote git.example.com cannot be reached', {
          hint: 'check that the remote is up and the url in agents resource show local/r is right',
        }),
        'check that the remote is up and the url in agents resource show local/r is right',
      ],
      [new Error('git push died'), 'run agents plan apply p1 to try the apply again'],
    ] as const) {
      const { plans, engine, sandboxes } = await strategized();
      await engine.execute('p1', handle('t-execute'), { yes: false });
      sandboxes.apply = async () => {
        throw thrown;
      };
      const t = handle('t-apply');
      await engine.apply('p1', t, { yes: true });
      assert.equal(t.states.at(-1), 'TASK_STATE_FAILED');
      const plan = await plans.get('p1');
      assert.equal(`${plan?.phase}/${plan?.state}`, 'apply/errored');
      assert.equal(plan?.error?.message, thrown.message);
      assert.equal(plan?.error?.hint, hint);
    }
  });
});

/**
 * The VS Code extension's plans view logic against a real `agents serve --stdio`: plans made with
 * a built-in action on a real git repository, listed and shown as tree rows, executed with an
 * approval, their diff as the diff editor's two texts, applied; rejected and cancelled plans; the
 * status-bar model; refused operations as the user sees them.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { planUse, projectRegistry, resourceRegistry } from '../../src/protocol/client/index.ts';
import type { Connection } from '../../clients/vscode/src/core/connection.ts';
import { errorView } from '../../clients/vscode/src/core/errors.ts';
import { argumentValue, PlansController, type PlanStatus } from '../../clients/vscode/src/core/plans.ts';
import { statusBarView } from '../../clients/vscode/src/core/status.ts';
import { initRepo } from '../support/git.ts';
import { eventually } from '../support/harness.ts';
import { connect, localTarget, tempRoot } from '../support/vscode-core.ts';

const ROOT = tempRoot('agents-vscode-plans-');
const A = 'const colour = 1;\nexport { colour };\n';
let conn: Connection;
let plans: PlansController;
let repo: string;
let git: (...args: string[]) => string;

async function newPlan(profile: 'manual' | 'trusted'): Promise<string> {
  const run = await conn.with((c) =>
    c.call(planUse, {
      action: 'builtin/replace',
      projects: ['local/vsc'],
      arguments: { pattern: 'colour', replacement: 'color', glob: 'src/**/*.ts' },
      automationProfile: profile,
      wait: true,
    }),
  );
  return run.plan.planId;
}

const settled = (planId: string, ok: (s: PlanStatus) => boolean): Promise<PlanStatus> =>
  eventually(
    async () => {
      const s = await plans.status(planId);
      return ok(s) ? s : undefined;
    },
    20_000,
    `plan ${planId}`,
  );

before(async () => {
  repo = join(ROOT, 'repo');
  git = initRepo(repo, { 'src/a.ts': A, 'src/b.ts': 'export const colour2 = 2;\n', 'README.md': '# colour\n' });
  ({ conn } = connect(localTarget(join(ROOT, 'data'), { CLEVERAGENTS_CONFINEMENT: 'none' })));
  plans = new PlansController(conn);
  await conn.with(async (c) => {
    await c.call(resourceRegistry.add, {
      definition: { name: 'local/vsc', type: 'git-checkout', path: repo, branch: 'main' },
    });
    await c.call(projectRegistry.add, { definition: { name: 'local/vsc', resources: ['local/vsc'] } });
  });
});

after(async () => {
  await conn?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

describe('the extension core: plans', () => {
  it('list, tree, execute with an approval, diff texts, apply: as the plans view does it', async () => {
    const planId = await newPlan('manual');
    const rows = await plans.children();
    const row = rows.find((r) => r.planId === planId);
    assert.ok(row, 'the plan is a row of the tree');
    assert.equal(row.kind, 'plan');
    assert.match(row.description, /^strategize · complete/);
    assert.match(row.contextValue, /:execute:/);
    assert.doesNotMatch(row.contextValue, /:apply:/);

    const decisions = await plans.children(row);
    assert.equal(decisions[0]?.kind, 'decision');
    assert.equal(decisions[0]?.description.split(' · ')[0], 'strategy');
    const steps = await plans.children(decisions[0]);
    assert.match(steps[0]?.description ?? '', /^step · builtin\/replace-in-files/);

    let changes = 0;
    const stop = plans.onChange(() => changes++);
    const run = await plans.execute(planId);
    assert.equal(run.plan.planId, planId);
    const waiting = await settled(planId, (s) => s.waiting?.kind === 'tool-approval');
    const bar = statusBarView({ kind: 'connected', agent: 'a', mode: 'local' }, [waiting]);
    assert.equal(bar.visible, true);
    assert.equal(bar.text, '$(bell-dot) 1 waiting');
    assert.match(bar.tooltip, /waits for approval/);
    assert.equal(bar.command, 'cleveragents.showRunningPlans');
    const waitingRow = (await plans.children()).find((r) => r.planId === planId);
    assert.match(waitingRow?.contextValue ?? '', /:approve:/);
    assert.match(waitingRow?.contextValue ?? '', /:reject:/);
    assert.match(waitingRow?.description ?? '', /waits: approval/);
    assert.equal(readFileSync(join(repo, 'src/a.ts'), 'utf8'), A, 'nothing changed in the project');

    await plans.approve(planId);
    const done = await settled(planId, (s) => s.phase === 'execute' && s.state === 'complete');
    assert.ok(changes > 0, 'the view was told to refresh');
    stop();
    assert.match((await plans.children()).find((r) => r.planId === planId)?.contextValue ?? '', /:apply:.*diff:/);
    assert.equal(statusBarView({ kind: 'connected', agent: 'a', mode: 'local' }, [done]).visible, false);

    const texts = await plans.diffTexts(planId);
    assert.deepEqual(
      texts.map((t) => [t.path, t.status, t.complete]),
      [
        ['src/a.ts', 'modified', true],
        ['src/b.ts', 'modified', true],
      ],
    );
    assert.equal(texts[0]?.original, A);
    assert.equal(texts[0]?.modified, 'const color = 1;\nexport { color };\n');
    assert.equal(texts[1]?.original, 'export const colour2 = 2;\n');
    assert.equal(texts[1]?.modified, 'export const color2 = 2;\n');

    const applied = await plans.apply(planId);
    assert.equal(applied.plan.state, 'applied');
    assert.equal(readFileSync(join(repo, 'src/a.ts'), 'utf8'), 'const color = 1;\nexport { color };\n');
    assert.equal(git('rev-list', '--count', 'main'), '2', 'one commit on the branch');
    const after = await plans.diffTexts(planId);
    assert.equal(after[0]?.original, A, 'after apply, the old side is rebuilt from the project');
    assert.equal(after[0]?.complete, true);
  });

  it('a new plan from the pickers: the action with its arguments, the project; strategized and listed', async () => {
    const replace = (await plans.actions()).find((a) => a.name === 'builtin/replace');
    assert.ok(replace, 'builtin/replace is offered');
    assert.deepEqual(replace.arguments.map((a) => a.name).sort(), ['flags', 'glob', 'pattern', 'replacement']);
    assert.ok((await plans.projects()).some((p) => p.name === 'local/vsc'));
    const run = await plans.use('builtin/replace', 'local/vsc', { pattern: 'colour', replacement: 'color' });
    assert.equal(run.plan.phase, 'strategize');
    assert.equal(run.plan.state, 'complete');
    assert.ok((await plans.children()).some((r) => r.planId === run.plan.planId));
    await assert.rejects(plans.use('builtin/replace', 'local/vsc', {}), /pattern/);
  });

  it('typed argument values: numbers, booleans, listed values, required and defaults', () => {
    assert.deepEqual(argumentValue({ type: 'integer' }, ' 42 '), { value: 42 });
    assert.deepEqual(argumentValue({ type: 'integer' }, '4.5'), { error: 'must be a whole number' });
    assert.deepEqual(argumentValue({ type: 'number' }, 'x'), { error: 'must be a number' });
    assert.deepEqual(argumentValue({ type: 'boolean' }, 'Yes'), { value: true });
    assert.deepEqual(argumentValue({ type: 'boolean' }, 'maybe'), { error: 'must be true or false' });
    assert.deepEqual(argumentValue({ type: 'string', enum: ['a', 'b'] }, 'c'), { error: 'must be one of a, b' });
    assert.deepEqual(argumentValue({ type: 'string', required: true }, ''), { error: 'is required' });
    assert.deepEqual(argumentValue({ type: 'string', required: true, default: 'd' }, ''), { value: undefined });
    assert.deepEqual(argumentValue({ type: 'string' }, ''), { value: undefined });
  });

  it('reject with guidance: the step does not run and the plan has no changes', async () => {
    const planId = await newPlan('manual');
    await plans.execute(planId);
    await settled(planId, (s) => s.waiting !== undefined);
    await plans.reject(planId, 'leave the British spelling');
    const s = await settled(planId, (x) => !x.running && x.waiting === undefined);
    assert.equal(s.phase, 'execute');
    assert.deepEqual(await plans.diffTexts(planId), []);
  });

  it('cancel: a cancelled plan allows no execute or apply', async () => {
    const planId = await newPlan('manual');
    const s = await plans.cancel(planId, 'not today');
    assert.equal(s.state, 'cancelled');
    const row = (await plans.children()).find((r) => r.planId === planId);
    assert.doesNotMatch(row?.contextValue ?? '', /:execute:|:apply:/);
  });

  it('a refused operation carries the agent’s message and what is allowed', async () => {
    const planId = await newPlan('manual');
    const err = await plans.apply(planId).then(
      () => assert.fail('apply before execute must be refused'),
      (e: unknown) => e,
    );
    const view = errorView(err);
    assert.match(view.message, /apply/);
    assert.ok(view.hint, JSON.stringify(view));
    const unknown = await plans.status('01ARZ3NDEKTSV4RRFFQ69G5FAV').catch((e: unknown) => errorView(e));
    assert.match(JSON.stringify(unknown), /not found/i);
  });

  it('the status bar counts running plans and shows a dead agent', () => {
    const base = { kind: 'connected' as const, agent: 'a', mode: 'local' as const };
    const running = (name: string, done: number): PlanStatus =>
      ({
        name,
        phase: 'execute',
        state: 'processing',
        running: true,
        progress: { stepsDone: done, stepsTotal: 3 },
      }) as PlanStatus;
    assert.equal(statusBarView(base, [running('p1', 1)]).text, '$(sync~spin) execute 1/3');
    const two = statusBarView(base, [running('p1', 1), running('p2', 2)]);
    assert.equal(two.text, '$(sync~spin) 2 plans running');
    assert.equal(two.tooltip, 'p1: execute processing 1/3\np2: execute processing 2/3');
    const dead = statusBarView({ kind: 'exited', error: { message: 'the agent process exited (SIGKILL)' } }, []);
    assert.equal(dead.visible, true);
    assert.equal(dead.alert, true);
    assert.match(dead.tooltip, /^The agent stopped: the agent process exited \(SIGKILL\)/);
    assert.equal(statusBarView(base, []).visible, false);
  });
});

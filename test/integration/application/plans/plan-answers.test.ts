/**
 * Answers to a plan's approval go through PlanService (issue #8, defect 3): only on the task that
 * waits; a request that is gone (rollback) ends its task, so nothing can answer it any more.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL } from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';
import { initRepo } from '../../../support/git.ts';

describe('answers to a plan reach PlanService, and only on the waiting task', () => {
  let app: App;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-answers-'));
    app = await buildApp({
      dataDir: dir,
      inMemory: true,
      validateResults: true,
      card: { endpoint: 'memory://', auth: 'none' },
    });
    const repo = join(dir, 'repo');
    initRepo(repo, { 'a.txt': 'one\n' });
    const r = app.facade.registry;
    await r.add(
      'resource',
      { definition: { name: 'local/ans-repo', type: 'git-checkout', path: repo, branch: 'main' } },
      LOCAL_PRINCIPAL,
    );
    await r.add(
      'project',
      { definition: { name: 'local/ans-project', resources: ['local/ans-repo'] } },
      LOCAL_PRINCIPAL,
    );
    await r.add(
      'action',
      {
        definition: {
          name: 'local/ans-two',
          descriptionTemplate: 'two writes',
          definitionOfDone: 'written',
          steps: [
            { id: 'one', tool: 'builtin/write-file', args: { path: 'b.txt', content: 'b\n' } },
            { id: 'two', tool: 'builtin/write-file', args: { path: 'c.txt', content: 'c\n' } },
          ],
        },
      },
      LOCAL_PRINCIPAL,
    );
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const waitingPlan = async (): Promise<{ planId: string; taskId: string; contextId: string }> => {
    const plans = app.facade.plans;
    const used = await plans.use(
      { action: 'local/ans-two', projects: ['local/ans-project'], automationProfile: 'manual' },
      LOCAL_PRINCIPAL,
    );
    const ex = await plans.execute(used.plan.planId, { wait: true }, LOCAL_PRINCIPAL);
    assert.equal(ex.task?.status.state, 'TASK_STATE_INPUT_REQUIRED');
    return { planId: used.plan.planId, taskId: ex.taskId, contextId: used.plan.contextId };
  };

  it('refuses an answer on another task of the plan, naming the task that waits', async () => {
    const { planId, taskId, contextId } = await waitingPlan();
    const other = {
      id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
      contextId,
      status: { state: 'TASK_STATE_INPUT_REQUIRED' as const },
    };
    const message = { messageId: randomUUID(), role: 'ROLE_USER' as const, parts: [{ text: 'yes' }] };
    await assert.rejects(
      app.facade.planAnswers.onInput(other, message, LOCAL_PRINCIPAL),
      (e: unknown) =>
        e instanceof AppError &&
        e.reason === 'INVALID_STATE' &&
        e.message.includes(`plan ${planId} waits on task ${taskId}`),
    );
    assert.equal(
      (await app.facade.planQueries.status(planId, LOCAL_PRINCIPAL)).waiting?.taskId,
      taskId,
      'still waiting',
    );
    await app.facade.plans.cancel(planId, undefined, LOCAL_PRINCIPAL);
  });

  it('a rollback ends the waiting task: the request it asked is gone, and no answer reaches it', async () => {
    const plans = app.facade.plans;
    const { planId, taskId } = await waitingPlan();
    const step2 = await app.facade.planAnswers.approve(planId, {}, LOCAL_PRINCIPAL);
    assert.equal(step2.task?.status.state, 'TASK_STATE_INPUT_REQUIRED', 'step 2 asks');
    const cp = (await app.facade.planQueries.status(planId, LOCAL_PRINCIPAL)).checkpoints.find(
      (c) => c.label === 'before-execute',
    );
    assert.ok(cp);
    const rolled = await plans.rollback({ checkpointId: cp.id, planId }, LOCAL_PRINCIPAL);
    assert.equal(`${rolled.phase}/${rolled.state}`, 'execute/queued');
    assert.equal(rolled.waiting, undefined);
    const task = await app.facade.tasks.get(taskId, 0, LOCAL_PRINCIPAL);
    assert.equal(task.status.state, 'TASK_STATE_FAILED');
    assert.match(task.status.message?.parts[0]?.text ?? '', /rolled back to checkpoint/);
    await assert.rejects(
      app.facade.tasks.send(
        { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId, parts: [{ text: 'yes' }] } },
        LOCAL_PRINCIPAL,
      ),
      (e: unknown) => e instanceof AppError && e.reason === 'UNSUPPORTED_OPERATION',
    );
    await assert.rejects(
      app.facade.planAnswers.approve(planId, {}, LOCAL_PRINCIPAL),
      (e: unknown) => e instanceof AppError && e.reason === 'INVALID_STATE',
    );
    await plans.cancel(planId, undefined, LOCAL_PRINCIPAL);
  });
});

/**
 * Two instances on one database with different data directories: a plan executed on A has its
 * sandbox under A's data directory. Every plan operation on B that needs the sandbox answers
 * UNAVAILABLE, saying where the sandbox is, and leaves the plan exactly as it was; A still works
 * on it (the hint's "run this on that instance" holds). The same when the sandbox directory is gone.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL } from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';
import { databaseFile } from '../../../../src/main/paths.ts';
import { initRepo } from '../../../support/git.ts';

const build = (dataDir: string): Promise<App> =>
  buildApp({
    dataDir,
    validateResults: true,
    confinement: { mode: 'none' },
    card: { endpoint: 'memory://', auth: 'none' },
  });

/** Asserts `p` is refused with UNAVAILABLE, the documented message, and a hint matching `hint`. */
async function refusedHere(p: Promise<unknown>, root: string, hint: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.reason, 'UNAVAILABLE', err.message);
    assert.ok(
      err.message.includes(`The plan's sandbox ${root} is not reachable from this instance`),
      `the message names the sandbox: ${err.message}`,
    );
    assert.match(err.hint ?? '', hint);
    return true;
  });
}

describe("a plan's sandbox that is not on this instance", () => {
  let dir: string;
  let a: App;
  let b: App;
  let git: (...args: string[]) => string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-elsewhere-'));
    const [dataA, dataB] = [join(dir, 'a'), join(dir, 'b')];
    a = await build(dataA);
    // B's database is A's file: one database, two data directories.
    mkdirSync(dataB, { recursive: true });
    symlinkSync(databaseFile(dataA), databaseFile(dataB));
    b = await build(dataB);
    git = initRepo(join(dir, 'repo'), { 'a.txt': 'one\n' });
    const r = a.facade.registry;
    await r.add(
      'resource',
      { definition: { name: 'local/el-repo', type: 'git-checkout', path: join(dir, 'repo'), branch: 'main' } },
      LOCAL_PRINCIPAL,
    );
    await r.add('project', { definition: { name: 'local/el', resources: ['local/el-repo'] } }, LOCAL_PRINCIPAL);
    await r.add(
      'action',
      {
        definition: {
          name: 'local/el-write',
          descriptionTemplate: 'two writes',
          definitionOfDone: 'done',
          steps: [
            { tool: 'builtin/write-file', args: { path: 'a.txt', content: 'two\n' } },
            { tool: 'builtin/write-file', args: { path: 'b.txt', content: 'bee\n' } },
          ],
        },
      },
      LOCAL_PRINCIPAL,
    );
  });
  after(async () => {
    await b.close();
    await a.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const onB = () => b.facade;

  /** A plan executed on A (its sandbox under A's data directory), ready to apply; its id and sandbox. */
  async function executedOnA(): Promise<{ planId: string; root: string }> {
    const used = await a.facade.plans.use({ action: 'local/el-write', projects: ['local/el'] }, LOCAL_PRINCIPAL);
    const planId = used.plan.planId;
    const ex = await a.facade.plans.execute(planId, { wait: true, yes: true }, LOCAL_PRINCIPAL);
    assert.equal(ex.task?.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(ex.task?.status));
    const root = (await a.facade.planQueries.status(planId, LOCAL_PRINCIPAL)).sandboxes?.[0]?.root;
    assert.ok(
      root !== undefined && root.startsWith(join(dir, 'a')),
      `the sandbox is under A's data directory: ${root}`,
    );
    return { planId, root };
  }

  it('diff, apply, rebase, rollback, correct, execute, an approval and prompt on B answer UNAVAILABLE, naming where it is, and change nothing', async () => {
    const { planId, root } = await executedOnA();
    const status = (app: App) => app.facade.planQueries.status(planId, LOCAL_PRINCIPAL);
    const before = await status(b);
    assert.equal(`${before.phase}/${before.state}`, 'execute/complete');
    const checkpoints = await b.storage.plans.checkpoints(planId);
    const first = checkpoints[0];
    assert.ok(first, 'the plan has checkpoints');
    // The sandbox directory of the instance that made it: `<dir>/<planId>/<resource>` two levels up.
    const where = new RegExp(`it is in ${join(dir, 'a', 'sandboxes')}.*run this on that instance`);
    const onB = b.facade;
    await refusedHere(onB.planQueries.diff(planId, LOCAL_PRINCIPAL), root, where);
    await refusedHere(onB.plans.apply(planId, { yes: true }, LOCAL_PRINCIPAL), root, where);
    await refusedHere(onB.planHousekeeping.rebase(planId, {}, LOCAL_PRINCIPAL), root, where);
    await refusedHere(onB.plans.rollback({ planId, checkpointId: first.id }, LOCAL_PRINCIPAL), root, where);
    const decision = (await b.storage.plans.decisions(planId)).at(-1);
    assert.ok(decision, 'the plan has decisions');
    const correction = { decisionId: decision.id, mode: 'revert' as const, guidance: 'again' };
    await refusedHere(onB.planCorrections.correct(correction, LOCAL_PRINCIPAL, planId), root, where);
    assert.deepEqual(await status(b), before, 'the plan is exactly as it was');
    assert.deepEqual(await b.storage.plans.decisions(planId), await a.storage.plans.decisions(planId));
    assert.deepEqual(await b.storage.plans.checkpoints(planId), checkpoints);
    assert.equal(readFileSync(join(dir, 'repo', 'a.txt'), 'utf8'), 'one\n', 'nothing was applied');

    // Rolled back on A (execute runs next): executing it on B is refused as well.
    await a.facade.plans.rollback({ planId, checkpointId: first.id }, LOCAL_PRINCIPAL);
    const requeued = await status(b);
    await refusedHere(onB.plans.execute(planId, { wait: true, yes: true }, LOCAL_PRINCIPAL), root, where);
    assert.deepEqual(await status(b), requeued);
    const again = await a.facade.plans.execute(planId, { wait: true, yes: true }, LOCAL_PRINCIPAL);
    assert.equal(again.task?.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(again.task?.status));

    // An apply on A refused by a dirty file (apply/errored): guidance on B, which would apply again, is refused unrecorded.
    writeFileSync(join(dir, 'repo', 'a.txt'), 'mine\n');
    await assert.rejects(a.facade.plans.apply(planId, { yes: true }, LOCAL_PRINCIPAL), /was not applied/);
    const errored = await status(b);
    assert.equal(`${errored.phase}/${errored.state}`, 'apply/errored');
    const decisions = await b.storage.plans.decisions(planId);
    await refusedHere(onB.plans.prompt(planId, 'try again', LOCAL_PRINCIPAL), root, where);
    assert.deepEqual(await status(b), errored);
    assert.deepEqual(await b.storage.plans.decisions(planId), decisions, 'no guidance was recorded');
    git('checkout', '--', 'a.txt');

    // On A, where the sandbox is, the same plan diffs and asks to apply.
    const diff = await a.facade.planQueries.diff(planId, LOCAL_PRINCIPAL);
    assert.equal(diff.stats.files, 2);
    const asked = await a.facade.plans.apply(planId, {}, LOCAL_PRINCIPAL);
    assert.equal(asked.task?.status.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(asked.task?.status));
    // The answer continues the apply in the sandbox: on B it is refused and the plan still waits.
    const waiting = await status(b);
    await refusedHere(onB.planAnswers.approve(planId, {}, LOCAL_PRINCIPAL), root, where);
    await refusedHere(onB.plans.prompt(planId, 'yes', LOCAL_PRINCIPAL), root, where);
    assert.deepEqual(await status(b), waiting, 'the plan still waits for the answer');
    const applied = await a.facade.planAnswers.approve(planId, {}, LOCAL_PRINCIPAL);
    assert.equal(applied.task?.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(applied.task?.status));
    assert.equal(git('show', 'main:a.txt'), 'two');
  });

  it('cancel --clean, delete and prune on B leave the plan and its sandbox alone; a plain cancel works there', async () => {
    const { planId, root } = await executedOnA();
    const status = (app: App) => app.facade.planQueries.status(planId, LOCAL_PRINCIPAL);
    const before = await status(b);
    const where = new RegExp(`it is in ${join(dir, 'a', 'sandboxes')}`);
    await refusedHere(onB().plans.cancel(planId, 'tidy', LOCAL_PRINCIPAL, { clean: true }), root, where);
    await refusedHere(onB().planHousekeeping.delete(planId, { force: true }, LOCAL_PRINCIPAL), root, where);
    assert.deepEqual(await status(b), before, 'not cancelled, not deleted');
    const pruned = await onB().planHousekeeping.prune(
      { olderThanSeconds: 0, states: ['complete'], force: true },
      LOCAL_PRINCIPAL,
    );
    assert.deepEqual(
      pruned.removed.map((r) => r.planId).filter((id) => id === planId),
      [],
      'prune on B removes nothing of it',
    );
    const kept = pruned.kept.find((k) => k.planId === planId);
    assert.match(kept?.reason ?? '', /not reachable from this instance.*prune it on the instance that has its sandbox/);
    assert.ok(existsSync(root), 'the sandbox is still there');
    // Cancelling needs no sandbox: B may; A cleans.
    const cancelled = await onB().plans.cancel(planId, 'not needed', LOCAL_PRINCIPAL);
    assert.equal(cancelled.state, 'cancelled');
    await a.facade.planHousekeeping.delete(planId, {}, LOCAL_PRINCIPAL);
    assert.equal(existsSync(root), false, 'A removed it');
  });

  it('a sandbox directory that is gone answers UNAVAILABLE on its own instance too, and the plan stays ready to apply', async () => {
    const { planId, root } = await executedOnA();
    rmSync(root, { recursive: true, force: true });
    const before = await a.facade.planQueries.status(planId, LOCAL_PRINCIPAL);
    const mount = /same data directory \(--data-dir\) at the same path/;
    await refusedHere(a.facade.planQueries.diff(planId, LOCAL_PRINCIPAL), root, mount);
    await refusedHere(a.facade.plans.apply(planId, { yes: true }, LOCAL_PRINCIPAL), root, mount);
    const afterwards = await a.facade.planQueries.status(planId, LOCAL_PRINCIPAL);
    assert.deepEqual(afterwards, before);
    assert.equal(`${afterwards.phase}/${afterwards.state}`, 'execute/complete');
    assert.equal(afterwards.error, undefined);
  });
});

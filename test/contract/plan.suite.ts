/** Contract cases of the plan lifecycle (every `_cleveragents/plan/…` method), on real git repositories. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  A2AClient,
  actionRegistry,
  actorRegistry,
  getTask,
  planApply,
  planApprove,
  planArtifacts,
  planCancel,
  planCorrect,
  planDelete,
  planDiff,
  planExecute,
  planExplain,
  planList,
  planPrompt,
  planPrune,
  planRebase,
  planReject,
  planRollback,
  planStatus,
  planTree,
  planUse,
  projectRegistry,
  resourceRegistry,
  sendMessage,
  sessionCreate,
  type ResultOf,
} from '../../src/protocol/client/index.ts';
import { rpcError } from './a2a.suite.ts';
import { makeRepo } from './registry.suite.ts';
import type { SuiteContext } from './suite-context.ts';

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();

export function planSuite(ctx: SuiteContext): void {
  let client: A2AClient;
  let work: string;
  let repo: string;
  before(async () => {
    client = ctx.harness().client;
    work = mkdtempSync(join(tmpdir(), 'ca-plan-'));
    repo = makeRepo(join(work, 'repo'));
    writeFileSync(join(repo, 'greeting.txt'), 'hello world\n');
    git(repo, 'add', '.');
    git(repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'greeting');
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/plan-repo', type: 'git-checkout', path: repo, branch: 'main' },
    });
    await client.call(projectRegistry.add, {
      definition: { name: 'local/plan-project', resources: ['local/plan-repo'] },
    });
    await client.call(actionRegistry.add, {
      definition: {
        name: 'local/greet',
        arguments: { who: { type: 'string', required: true }, times: { type: 'integer', default: 1 } },
        descriptionTemplate: 'Greet {{who}}',
        definitionOfDone: 'greeting.txt greets {{who}}',
        steps: [
          { id: 'edit', tool: 'builtin/edit-file', args: { path: 'greeting.txt', find: 'world', replace: '{{who}}' } },
          { id: 'note', tool: 'builtin/write-file', args: { path: 'notes/{{who}}.txt', content: 'greeted {{who}}\n' } },
          { id: 'look', tool: 'builtin/git-status', args: {} },
        ],
      },
    });
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  const use = (who: string, extra: Record<string, unknown> = {}) =>
    client.call(planUse, { action: 'local/greet', projects: ['local/plan-project'], arguments: { who }, ...extra });

  it('runs use → execute → diff → artifacts → apply on a real repository', async () => {
    const headBefore = git(repo, 'rev-parse', 'HEAD');
    const used = await use('Ada');
    assert.equal(used.plan.phase, 'strategize');
    assert.equal(used.plan.state, 'complete');
    assert.equal(used.task?.status.state, 'TASK_STATE_COMPLETED');
    const id = used.plan.planId;
    const tree = await client.call(planTree, { planId: id });
    assert.equal(tree.decisions.length, 1);
    assert.equal((tree.decisions[0] as { children: unknown[] }).children.length, 3);
    const ex = await client.call(planExecute, { planId: id, wait: true });
    assert.equal(ex.task?.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(ex.plan.phase, 'execute');
    assert.equal(ex.plan.state, 'complete');
    assert.equal(
      readFileSync(join(repo, 'greeting.txt'), 'utf8'),
      'hello world\n',
      'the user tree is untouched before apply',
    );
    assert.equal(git(repo, 'status', '--porcelain'), '');
    const diff = await client.call(planDiff, { planId: id });
    assert.match(diff.unified, /-hello world\n\+hello Ada/);
    assert.deepEqual(diff.stats, { files: 2, additions: 2, deletions: 1 });
    // The same changes file by file: paths relative to the resource, no `a/` or `b/`.
    const hunk = (oldLines: number, lines: Array<{ kind: ' ' | '+' | '-'; text: string }>) => ({
      oldStart: 1,
      oldLines,
      newStart: 1,
      newLines: 1,
      lines,
    });
    assert.deepEqual(diff.files, [
      {
        resource: 'local/plan-repo',
        oldPath: 'greeting.txt',
        newPath: 'greeting.txt',
        status: 'modified',
        hunks: [
          hunk(1, [
            { kind: '-', text: 'hello world' },
            { kind: '+', text: 'hello Ada' },
          ]),
        ],
      },
      {
        resource: 'local/plan-repo',
        oldPath: null,
        newPath: 'notes/Ada.txt',
        status: 'added',
        hunks: [hunk(0, [{ kind: '+', text: 'greeted Ada' }])],
      },
    ]);
    const arts = await client.call(planArtifacts, { planId: id });
    assert.deepEqual(
      arts.files.map((f) => [f['path'], f['change']]),
      [
        ['greeting.txt', 'edited'],
        ['notes/Ada.txt', 'written'],
      ],
    );
    const status = await client.call(planStatus, { planId: id });
    assert.deepEqual(status.progress, { stepsDone: 3, stepsTotal: 3 });
    assert.ok(status.checkpoints.length >= 3);
    const applied = await client.call(planApply, { planId: id, yes: true });
    assert.equal(applied.plan.state, 'applied');
    assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello Ada\n');
    assert.equal(git(repo, 'rev-parse', 'HEAD~1'), headBefore, 'one squashed commit');
    assert.equal(git(repo, 'log', '-1', '--format=%s'), 'Greet Ada');
    assert.doesNotMatch(git(repo, 'branch', '--list'), /cleveragents\/plan-/, 'the plan branch is gone');
    await rpcError(client.call(planExecute, { planId: id }), -32004, 'BusinessRuleViolation');
    await rpcError(
      client.call(planRollback, { checkpointId: status.checkpoints[0]?.id ?? '' }),
      -32004,
      'BusinessRuleViolation',
    );
    const afterDiff = await client.call(planDiff, { planId: id });
    assert.match(afterDiff.unified, /\+hello Ada/, 'the diff stays readable after apply');
    assert.deepEqual(afterDiff.files, diff.files, 'and file by file, from the stored diff');
    ctx.record('plan-lifecycle', {
      diff: diff.stats,
      files: diff.files,
      arts: arts.files.length,
      state: applied.plan.state,
    });
    git(repo, 'reset', '-q', '--hard', headBefore);
  });

  it('refuses illegal transitions, bad arguments and unknown ids', async () => {
    const used = await use('Bob');
    const err = await rpcError(
      client.call(planApply, { planId: used.plan.planId, yes: true }),
      -32004,
      'BusinessRuleViolation',
    );
    assert.match(err.message, /strategize\/complete/);
    await rpcError(
      client.call(planUse, { action: 'local/greet', projects: ['local/plan-project'], arguments: {} }),
      -32602,
      'ValidationError',
    );
    await rpcError(
      client.call(planUse, {
        action: 'local/greet',
        projects: ['local/plan-project'],
        arguments: { who: 'x', times: 'many' },
      }),
      -32602,
      'ValidationError',
    );
    await rpcError(
      client.call(planUse, {
        action: 'local/greet',
        projects: ['local/plan-project'],
        arguments: { who: 'x', colour: 'red' },
      }),
      -32602,
      'ValidationError',
    );
    // A fixed step's argument its tool would refuse at execute, where no correction can change it.
    const badRegex = await rpcError(
      client.call(planUse, {
        action: 'builtin/replace',
        projects: ['local/plan-project'],
        arguments: { pattern: 'colou(r', replacement: 'color' },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(
      badRegex.message,
      /arguments\.pattern is not a valid regular expression: .*Unterminated group \(the pattern of step 1, builtin\/replace-in-files\)/,
    );
    const badFlags = await rpcError(
      client.call(planUse, {
        action: 'builtin/replace',
        projects: ['local/plan-project'],
        arguments: { pattern: 'a', replacement: 'b', flags: 'gx' },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(badFlags.message, /arguments\.flags "gx" does not match/);
    await rpcError(
      client.call(planUse, { action: 'local/nothing', projects: ['local/plan-project'] }),
      -32001,
      'ResourceNotFoundError',
    );
    await rpcError(client.call(planStatus, { planId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }), -32001, 'ResourceNotFoundError');
    await rpcError(client.call(planStatus, { planId: '../etc' }), -32602, 'ValidationError');
    await client.call(planCancel, { planId: used.plan.planId, reason: 'not needed' });
  });

  it('rolls back to a checkpoint and resumes execute from there', async () => {
    const id = (await use('Cy')).plan.planId;
    await client.call(planExecute, { planId: id, wait: true });
    const status = await client.call(planStatus, { planId: id });
    const cps = status.checkpoints;
    const first = cps.find((c) => c.label === 'after-step:1');
    assert.ok(first, JSON.stringify(cps));
    const rolled = await client.call(planRollback, { checkpointId: first.id });
    assert.equal(rolled.phase, 'execute');
    assert.equal(rolled.state, 'queued');
    assert.deepEqual(rolled.progress, { stepsDone: 1, stepsTotal: 3 });
    const diff = await client.call(planDiff, { planId: id });
    assert.equal(diff.stats.files, 1, 'only the first step remains');
    const again = await client.call(planExecute, { planId: id, wait: true });
    assert.equal(again.plan.state, 'complete');
    assert.equal((await client.call(planDiff, { planId: id })).stats.files, 2);
    await client.call(planCancel, { planId: id });
    await rpcError(
      client.call(planRollback, { checkpointId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
      -32001,
      'ResourceNotFoundError',
    );
  });

  it('corrects a decision by reverting (re-strategize) or appending guidance', async () => {
    const id = (await use('Dee')).plan.planId;
    await client.call(planExecute, { planId: id, wait: true });
    const tree = await client.call(planTree, { planId: id });
    const steps = tree.decisions[0]?.children ?? [];
    const second = steps.find((s) => s.stepIndex === 1);
    assert.ok(second);
    const dry = await client.call(planCorrect, {
      decisionId: second.id,
      mode: 'revert',
      guidance: 'write the note elsewhere',
      dryRun: true,
    });
    assert.ok('dryRun' in dry, 'a dry run answers with a preview');
    assert.equal(dry.wouldSupersede.length, 2);
    assert.equal((await client.call(planStatus, { planId: id })).attempt, 1, 'a dry run changes nothing');
    const reverted = await client.call(planCorrect, {
      decisionId: second.id,
      mode: 'revert',
      guidance: 'write the note elsewhere',
    });
    assert.ok('superseded' in reverted, 'a correction answers with what it superseded');
    assert.equal(reverted.attempt, 2);
    assert.deepEqual(reverted.superseded, dry.wouldSupersede);
    const st = await client.call(planStatus, { planId: id });
    assert.equal(st.state, 'queued');
    assert.deepEqual(st.progress, { stepsDone: 1, stepsTotal: 3 });
    const full = await client.call(planTree, { planId: id, showSuperseded: true });
    const flat = JSON.stringify(full.decisions);
    assert.match(flat, /"superseded":true/);
    const explained = await client.call(planExplain, { decisionId: second.id });
    assert.equal(explained.decision.superseded, true);
    const appended = await client.call(planCorrect, {
      decisionId: steps[0]?.id ?? '',
      mode: 'append',
      guidance: 'keep the greeting short',
    });
    assert.equal(appended['attempt'], 3);
    await rpcError(
      client.call(planCorrect, { decisionId: second.id, mode: 'revert', guidance: 'again' }),
      -32004,
      'BusinessRuleViolation',
    );
    const done = await client.call(planExecute, { planId: id, wait: true });
    assert.equal(done.plan.state, 'complete');
    await client.call(planCancel, { planId: id });
  });

  it('asks for approval under the manual profile and continues on the same task (yes and no)', async () => {
    const id = (await use('Eve', { automationProfile: 'manual' })).plan.planId;
    const ex = await client.call(planExecute, { planId: id, wait: true });
    assert.equal(ex.task?.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const request = ex.task?.status.message?.parts.find((p) => p.data !== undefined)?.data as {
      approvalRequest: { tool: string; preview: string };
    };
    assert.equal(request.approvalRequest.tool, 'builtin/edit-file');
    assert.match(request.approvalRequest.preview, /\+Eve/);
    await rpcError(client.call(planExecute, { planId: id }), -32004, 'BusinessRuleViolation');
    // approve step 1 on the same task
    const r1 = await client.call(sendMessage, {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        taskId: ex.taskId,
        parts: [{ data: { approval: { decision: 'approve' } } }],
      },
    });
    assert.ok('task' in r1);
    assert.equal(r1.task.id, ex.taskId);
    assert.equal(r1.task.status.state, 'TASK_STATE_INPUT_REQUIRED', 'step 2 asks too');
    // reject step 2 in plain words
    const r2 = await client.call(sendMessage, {
      message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: ex.taskId, parts: [{ text: 'no' }] },
    });
    assert.ok('task' in r2);
    assert.equal(r2.task.status.state, 'TASK_STATE_COMPLETED');
    const arts = await client.call(planArtifacts, { planId: id });
    assert.deepEqual(
      arts.files.map((f) => f['path']),
      ['greeting.txt'],
      'the rejected write did not happen',
    );
    // Guidance on the waiting apply never approves it: "go ahead" is not a clear yes.
    const ap = await client.call(planApply, { planId: id });
    assert.equal(ap.task?.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const prompted = await client.call(planPrompt, { planId: id, guidance: 'go ahead' });
    assert.equal(prompted.task?.status.state, 'TASK_STATE_CANCELED', 'guidance rejects the apply');
    const declined = await client.call(planStatus, { planId: id });
    assert.equal(`${declined.phase}/${declined.state}`, 'execute/complete');
    assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello world\n', 'nothing was applied');
    // agents plan approve: the one way to say yes by method
    const ap2 = await client.call(planApply, { planId: id });
    assert.equal(ap2.task?.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const approved = await client.call(planApprove, { planId: id });
    assert.equal(approved.taskId, ap2.taskId, 'the answer continues the waiting task');
    assert.equal(approved.task?.status.state, 'TASK_STATE_COMPLETED');
    assert.equal((await client.call(planStatus, { planId: id })).state, 'applied');
    git(repo, 'reset', '-q', '--hard', 'HEAD~1');
    const applyTask = await client.call(getTask, { id: ap2.taskId });
    assert.equal(applyTask.status.state, 'TASK_STATE_COMPLETED');
  });

  it('approve, reject (with guidance) and prompt "no" answer a waiting approval; invalid answers change nothing', async () => {
    const id = (await use('Hal', { automationProfile: 'manual' })).plan.planId;
    await rpcError(client.call(planApprove, { planId: id }), -32004, 'BusinessRuleViolation');
    const ex = await client.call(planExecute, { planId: id, wait: true });
    assert.equal(ex.task?.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const historyBefore = (await client.call(getTask, { id: ex.taskId })).history?.length;
    // An answer that is none says which answers are valid, and is not stored.
    const bad = await rpcError(
      client.call(sendMessage, {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          taskId: ex.taskId,
          parts: [{ data: { approval: { decision: 'maybe' } } }],
        },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(bad.message, /Valid answers: approve \(yes/);
    const approveWithGuidance = await rpcError(
      client.call(sendMessage, {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          taskId: ex.taskId,
          parts: [{ data: { approval: { decision: 'approve', guidance: 'but do it differently' } } }],
        },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(approveWithGuidance.message, /guidance comes with a rejection/);
    const unchanged = await client.call(getTask, { id: ex.taskId });
    assert.equal(unchanged.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(unchanged.history?.length, historyBefore, 'refused answers are not stored');
    // "no" through prompt rejects (it used to approve).
    const no = await client.call(planPrompt, { planId: id, guidance: 'no' });
    assert.equal(no.taskId, ex.taskId);
    assert.equal(no.task?.status.state, 'TASK_STATE_INPUT_REQUIRED', 'step 1 skipped, step 2 asks');
    const step2 = await client.call(planApprove, { planId: id });
    assert.equal(step2.task?.status.state, 'TASK_STATE_COMPLETED');
    const arts = await client.call(planArtifacts, { planId: id });
    assert.deepEqual(
      arts.files.map((f) => f['path']),
      ['notes/Hal.txt'],
      'the rejected edit did not happen, the approved write did',
    );
    // Reject the apply with guidance: the plan stays ready to apply, the project untouched.
    const ap = await client.call(planApply, { planId: id });
    const rejected = await client.call(planReject, { planId: id, guidance: 'not before the release' });
    assert.equal(rejected.taskId, ap.taskId);
    assert.equal(rejected.task?.status.state, 'TASK_STATE_CANCELED');
    const st = await client.call(planStatus, { planId: id });
    assert.equal(`${st.phase}/${st.state}`, 'execute/complete');
    assert.equal(st['waiting'], undefined);
    await rpcError(client.call(planReject, { planId: id }), -32004, 'BusinessRuleViolation');
    type Node = ResultOf<typeof planTree>['decisions'][number];
    const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children)]);
    const approvals = flat((await client.call(planTree, { planId: id })).decisions)
      .filter((d) => d.type === 'approval')
      .map((d) => [d.question, d.chosen, d.rationale]);
    assert.deepEqual(approvals, [
      ['Run this tool call?', 'reject', 'rejected by the user'],
      ['Run this tool call?', 'approve', 'approved by the user'],
      ['Apply the changes to the project?', 'reject', 'not before the release'],
    ]);
    await client.call(planCancel, { planId: id });
    ctx.record('plan-answers', {
      no: no.task?.status.state,
      approved: step2.task?.status.state,
      rejected: rejected.task?.status.state,
      files: arts.files.length,
    });
  });

  it("no message runs a plan: builtin/planner is no actor, and a plan's context takes no chat", async () => {
    const used = await use('Ivy');
    const id = used.plan.planId;
    const contextId = used.task?.contextId ?? '';
    assert.ok(contextId);
    const head = git(repo, 'rev-parse', 'HEAD');
    await rpcError(client.call(sessionCreate, { actor: 'builtin/planner' }), -32001, 'ResourceNotFoundError');
    // nor can one be registered: no built-in model runs plans
    const model = await rpcError(
      client.call(actorRegistry.add, {
        definition: { name: 'local/my-planner', provider: 'builtin', model: 'planner' },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(model.message + JSON.stringify(model.data), /a builtin actor runs one of: echo, conformance/);
    const command = { data: { planCommand: { op: 'apply', planId: id, yes: true } } };
    const refused = await rpcError(
      client.call(sendMessage, {
        message: { messageId: randomUUID(), role: 'ROLE_USER', contextId, parts: [command] },
      }),
      -32004,
      'UnsupportedOperationError',
    );
    assert.match(refused.message, /belongs to a plan and takes no chat messages/);
    // Elsewhere the command is just data for the chat actor.
    const chat = await client.call(sendMessage, {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [command] },
    });
    assert.notEqual('task' in chat ? chat.task.contextId : chat.message.contextId, contextId);
    // An answer on a plan task that waits for none is refused too (its strategize task is done).
    await rpcError(
      client.call(sendMessage, {
        message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: used.taskId, parts: [{ text: 'yes' }] },
      }),
      -32004,
      'UnsupportedOperationError',
    );
    const st = await client.call(planStatus, { planId: id });
    assert.equal(`${st.phase}/${st.state}`, 'strategize/complete', 'the plan never moved');
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head);
    assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello world\n');
    await client.call(planCancel, { planId: id });
    ctx.record('plan-no-bypass', { state: `${st.phase}/${st.state}` });
  });

  it('stops with a plan error listing the files on a conflict at apply, changing nothing', async () => {
    const id = (await use('Fay')).plan.planId;
    await client.call(planExecute, { planId: id, wait: true });
    writeFileSync(join(repo, 'greeting.txt'), 'hello there\n');
    git(repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qam', 'conflicting change');
    const head = git(repo, 'rev-parse', 'HEAD');
    const err = await rpcError(client.call(planApply, { planId: id, yes: true }), -32008, 'PlanError');
    assert.deepEqual((err.data as { files: string[] }).files, ['greeting.txt']);
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello there\n');
    const st = await client.call(planStatus, { planId: id });
    assert.equal(st.phase, 'apply');
    assert.equal(st.state, 'errored');
    await client.call(planCancel, { planId: id });
    git(repo, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('stops at the tool-call budget and keeps what was done', async () => {
    const id = (await use('Gus', { maxToolCalls: 1 })).plan.planId;
    const ex = await client.call(planExecute, { planId: id, wait: true });
    assert.equal(ex.task?.status.state, 'TASK_STATE_FAILED');
    const st = await client.call(planStatus, { planId: id });
    assert.equal(st.state, 'constrained');
    assert.equal(st.error?.kind, 'budget');
    assert.equal((await client.call(planDiff, { planId: id })).stats.files, 1, 'the first step is kept');
    const more = await client.call(planExecute, { planId: id, wait: true, maxToolCalls: 10 });
    assert.equal(more.plan.state, 'complete');
    await client.call(planCancel, { planId: id });
  });

  it('lists plans with filters', async () => {
    const all = await client.call(planList, { project: 'local/plan-project' });
    assert.ok(all.totalSize >= 6);
    const applied = await client.call(planList, { state: 'applied' });
    assert.ok(applied.plans.length > 0, 'the first test applied a plan');
    assert.ok(applied.plans.every((p) => p.state === 'applied'));
    // A listed plan reports its real counts and checkpoints, as its status does.
    for (const p of all.plans) {
      const st = await client.call(planStatus, { planId: p.planId });
      assert.deepEqual(p.counts, st.counts, `counts of ${p.planId}`);
      assert.deepEqual(p.checkpoints, st.checkpoints, `checkpoints of ${p.planId}`);
    }
    const counts = applied.plans[0]?.counts as
      { decisions: number; checkpoints: number; toolCalls: number } | undefined;
    assert.ok(
      counts && counts.decisions > 0 && counts.checkpoints > 0 && counts.toolCalls > 0,
      'an applied plan has decisions, tool calls and checkpoints',
    );
    // Paging one at a time visits every plan once, newest first, as one big page does.
    const seen: string[] = [];
    let token = '';
    for (let i = 0; i <= all.totalSize; i++) {
      const page = await client.call(planList, {
        project: 'local/plan-project',
        pageSize: 1,
        ...(token ? { pageToken: token } : {}),
      });
      seen.push(...page.plans.map((p) => p.planId));
      token = page.nextPageToken;
      if (!token) break;
    }
    assert.deepEqual(
      seen,
      all.plans.map((p) => p.planId),
    );
    const named = await client.call(planList, { nameRegex: '^greet on ', pageSize: 2 });
    assert.equal(named.plans.length, 2);
    assert.notEqual(named.nextPageToken, '');
    await rpcError(client.call(planList, { nameRegex: '[' }), -32602, 'ValidationError');
    await rpcError(client.call(planList, { pageToken: all.plans[0]?.planId ?? 'x' }), -32602, 'ValidationError');
    ctx.record('plan-list', { applied: applied.plans.map((p) => p.state) });
  });
  describe('housekeeping: a moved base, delete, prune, cancel --clean', () => {
    const userCommit = (file: string, content: string): void => {
      writeFileSync(join(repo, file), content);
      git(repo, 'add', '.');
      git(repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', `user: ${file}`);
    };
    const planBranch = (id: string): string => git(repo, 'branch', '--list', `cleveragents/plan-${id}`);
    const worktrees = (): string => git(repo, 'worktree', 'list', '--porcelain');

    it('rebases onto a moved branch cleanly: the plan stays appliable and applies both changes', async () => {
      const start = git(repo, 'rev-parse', 'HEAD');
      const id = (await use('Kim')).plan.planId;
      await client.call(planExecute, { planId: id, wait: true });
      userCommit('other.txt', 'the user was busy\n');
      const moved = git(repo, 'rev-parse', 'HEAD');
      const r = await client.call(planRebase, { planId: id });
      assert.equal(r.outcome, 'rebased');
      assert.deepEqual(
        r.sandboxes.map((s) => [s.outcome, s.onto, s.targetBranch]),
        [['rebased', moved, 'main']],
      );
      assert.equal(`${r.plan.phase}/${r.plan.state}`, 'execute/complete');
      assert.ok(r.plan.checkpoints.some((c) => c.id === r.checkpointId && c.label === 'after-rebase'));
      assert.equal(r.plan.sandboxes[0]?.baseCommit, moved);
      const diff = await client.call(planDiff, { planId: id });
      assert.deepEqual(
        diff.sandboxes[0]?.files.map((f) => f.path),
        ['greeting.txt', 'notes/Kim.txt'],
        'the diff holds only the plan changes',
      );
      assert.equal((await client.call(planRebase, { planId: id })).outcome, 'up-to-date');
      // A checkpoint from before the rebase is on the old base: restoring it is refused, changing nothing.
      const before = r.plan.checkpoints.find((c) => c.label === 'before-execute');
      assert.ok(before);
      const old = await rpcError(
        client.call(planRollback, { checkpointId: before.id, planId: id }),
        -32004,
        'BusinessRuleViolation',
      );
      assert.match(String((old.data as { hint?: string }).hint), /before agents plan rebase/);
      assert.equal(`${(await client.call(planStatus, { planId: id })).state}`, 'complete');
      const applied = await client.call(planApply, { planId: id, yes: true });
      assert.equal(applied.plan.state, 'applied');
      assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello Kim\n');
      assert.equal(readFileSync(join(repo, 'other.txt'), 'utf8'), 'the user was busy\n');
      assert.equal(git(repo, 'rev-parse', 'HEAD~1'), moved);
      assert.equal(planBranch(id), '');
      ctx.record('plan-rebase-clean', { outcome: r.outcome, files: diff.stats.files });
      git(repo, 'reset', '-q', '--hard', start);
    });

    it('a conflicting move: apply names plan rebase; rebase errors with the files; --continue only once the markers are gone', async () => {
      const start = git(repo, 'rev-parse', 'HEAD');
      const id = (await use('Lou')).plan.planId;
      await client.call(planExecute, { planId: id, wait: true });
      userCommit('greeting.txt', 'hello there\n');
      const atApply = await rpcError(client.call(planApply, { planId: id, yes: true }), -32008, 'PlanError');
      assert.match(String((atApply.data as { hint?: string }).hint), new RegExp(`agents plan rebase ${id}`));

      const conflict = await rpcError(client.call(planRebase, { planId: id }), -32008, 'PlanError');
      const data = conflict.data as { files: string[]; kind: string; hint: string };
      assert.deepEqual(data.files, ['greeting.txt']);
      assert.equal(data.kind, 'conflict');
      assert.match(data.hint, /--continue/);
      assert.match(data.hint, new RegExp(`agents plan prompt ${id}`));
      const st = await client.call(planStatus, { planId: id });
      assert.equal(`${st.phase}/${st.state}`, 'execute/errored');
      assert.equal(st.error?.kind, 'conflict');
      assert.deepEqual(st.error?.files, ['greeting.txt']);
      assert.ok(st.allowed.includes('prompt'));
      assert.equal(st.allowed.includes('apply'), false);
      const root = st.sandboxes[0]?.root ?? '';
      assert.match(readFileSync(join(root, 'greeting.txt'), 'utf8'), /^<<<<<<< main\n/m);
      assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello there\n', 'the user tree is untouched');

      const early = await rpcError(client.call(planRebase, { planId: id, continue: true }), -32008, 'PlanError');
      assert.match(early.message, /conflict markers remain in greeting\.txt/);
      writeFileSync(join(root, 'greeting.txt'), 'hello there, Lou\n');
      const resolved = await client.call(planRebase, { planId: id, continue: true });
      assert.equal(resolved.outcome, 'resolved');
      assert.equal(`${resolved.plan.phase}/${resolved.plan.state}`, 'execute/complete');
      const applied = await client.call(planApply, { planId: id, yes: true });
      assert.equal(applied.plan.state, 'applied');
      assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello there, Lou\n');
      ctx.record('plan-rebase-conflict', { files: data.files, outcome: resolved.outcome });
      git(repo, 'reset', '-q', '--hard', start);
    });

    it('delete refuses unapplied work without force, then removes the plan, its worktree and branch', async () => {
      const id = (await use('Mo')).plan.planId;
      await client.call(planExecute, { planId: id, wait: true });
      const root = (await client.call(planStatus, { planId: id })).sandboxes[0]?.root ?? '';
      const refused = await rpcError(client.call(planDelete, { planId: id }), -32004, 'BusinessRuleViolation');
      assert.match(refused.message, /never applied: 2 files/);
      assert.match(String((refused.data as { hint?: string }).hint), /--force/);
      assert.notEqual(planBranch(id), '', 'nothing was removed');
      const r = await client.call(planDelete, { planId: id, force: true });
      assert.equal(r.deleted, true);
      assert.equal(r.discarded?.files, 2);
      assert.equal(planBranch(id), '');
      assert.doesNotMatch(worktrees(), new RegExp(id));
      assert.equal(existsSync(root), false);
      await rpcError(client.call(planStatus, { planId: id }), -32001, 'ResourceNotFoundError');
      await rpcError(client.call(planDelete, { planId: id }), -32001, 'ResourceNotFoundError');
    });

    it('cancel --clean removes the sandbox and keeps the plan; prune removes what matches and keeps unapplied work', async () => {
      const id = (await use('Nia')).plan.planId;
      await client.call(planExecute, { planId: id, wait: true });
      const cancelled = await client.call(planCancel, { planId: id, clean: true });
      assert.equal(cancelled.state, 'cancelled');
      assert.deepEqual(cancelled.sandboxes, []);
      assert.equal(planBranch(id), '');
      assert.doesNotMatch(worktrees(), new RegExp(id));

      const fresh = await client.call(planPrune, {});
      assert.deepEqual(fresh.removed, [], 'by default only plans older than 7 days');
      const dry = await client.call(planPrune, { olderThanSeconds: 0, states: ['cancelled'], dryRun: true });
      assert.ok(dry.removed.some((p) => p.planId === id));
      assert.equal((await client.call(planStatus, { planId: id })).state, 'cancelled', 'a dry run removes nothing');
      const kept = dry.kept.find((p) => /never applied/.test(p.reason));
      assert.ok(kept, 'earlier tests left cancelled plans with changes');

      const r = await client.call(planPrune, { olderThanSeconds: 0, states: ['cancelled'] });
      assert.ok(r.removed.some((p) => p.planId === id));
      assert.ok(r.kept.some((p) => p.planId === kept.planId));
      await rpcError(client.call(planStatus, { planId: id }), -32001, 'ResourceNotFoundError');
      assert.notEqual(planBranch(kept.planId), '', 'unapplied work stays');
      for (const p of r.removed) assert.equal(planBranch(p.planId), '');
      await rpcError(client.call(planPrune, { states: [] }), -32602, 'ValidationError');
      ctx.record('plan-prune', { dryRun: dry.dryRun, states: r.states });
    });
  });
}

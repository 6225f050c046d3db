/**
 * End to end: plans through the built `agents` CLI on temporary git repositories — in local mode
 * (each call spawns its own agent over stdio) and in server mode (HTTP to `agents serve`), as a
 * user without a terminal runs it: the lifecycle, the user's tree untouched until apply, a
 * conflict, rollback, corrections, cancel, resume after kill -9, approvals answered yes and no.
 */
import assert from 'node:assert/strict';
import { agentsCli, cliEnv as testCliEnv, type Agents, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { twoWritesAction } from '../support/registry-fixtures.ts';
import { createHash } from 'node:crypto';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { before, describe, it } from 'node:test';
import { eventually, startHttpServer } from '../support/harness.ts';
import { e2eRoot, localMode, serverMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-plan-e2e');
const TOKEN = 'e2e-plan-token-0123456789abcdefgh';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

type Result = CliResult;

const cliEnv = (dataDir: string): NodeJS.ProcessEnv => testCliEnv(dataDir, join(ROOT, 'no-config'));

function expectCode(res: Result, code: number, what: string): void {
  assert.equal(res.code, code, `${what}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

// ---- repositories ---------------------------------------------------------------------------

const git = (repo: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trimEnd();

/** A git repository on branch main with one commit: two TypeScript files that say colour. */
function makeRepo(name: string): string {
  const repo = join(ROOT, 'repos', name);
  initRepo(repo, {
    'src/a.ts': 'const colour = 1;\nexport { colour };\n',
    'src/b.ts': 'export const colour2 = 2;\n',
    'README.md': '# colour\n',
  });
  return repo;
}

/** Everything a user could notice: each file's bytes (outside .git), the status, HEAD and the branch. */
function snapshot(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== '.git') walk(p);
      } else out[relative(repo, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(repo);
  out['(status)'] = git(repo, 'status', '--porcelain', '--untracked-files=all');
  out['(HEAD)'] = git(repo, 'rev-parse', 'HEAD');
  out['(branch)'] = git(repo, 'symbolic-ref', 'HEAD');
  out['(main)'] = git(repo, 'rev-parse', 'refs/heads/main');
  return out;
}

/** Registers `local/<name>` as a git-checkout resource and a project of it. */
async function register(t: Agents, name: string, repo: string): Promise<void> {
  expectCode(
    await t.run(['resource', 'add', 'git-checkout', name, '--path', repo, '--branch', 'main']),
    0,
    'resource add',
  );
  expectCode(await t.run(['project', 'create', name, '--resource', name]), 0, 'project create');
}

const REPLACE = ['--arg', 'pattern=colour', '--arg', 'replacement=color', '--arg', 'glob=src/**/*.ts'];

async function use(t: Agents, action: string, project: string, extra: string[] = []): Promise<string> {
  const data = await t.ok(['plan', 'use', action, project, ...extra]);
  assert.match(data.plan.planId, ULID);
  assert.equal(`${data.plan.phase}/${data.plan.state}`, 'strategize/complete', JSON.stringify(data.plan.error));
  return data.plan.planId as string;
}

const status = (t: Agents, id: string): Promise<any> => t.ok(['plan', 'status', id]);

/** Pids of processes whose command line is exactly `argv`. */
function pidsOf(argv: string[]): number[] {
  const want = `${argv.join('\0')}\0`;
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8') === want) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const TWO_WRITES = twoWritesAction('local/two-writes');

/** A slow step, then a write: killed in the middle, the plan resumes from its checkpoint. */
const SLOW_WRITE = `name: local/slow-write
description: Wait, then write a file
descriptionTemplate: Wait, then write out.txt
definitionOfDone: out.txt exists
steps:
  - id: wait
    tool: builtin/run-command
    args: { command: "sleep 2" }
  - id: write
    tool: builtin/write-file
    args: { path: out.txt, content: "written after the wait" }
`;

interface Server {
  child: ChildProcess;
  url: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

async function startServer(dataDir: string): Promise<Server> {
  const s = await startHttpServer({ dataDir, env: cliEnv(dataDir), token: TOKEN });
  return {
    child: s.child,
    url: s.baseUrl,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      await s.stop(signal);
    },
  };
}

describe('plans through the CLI, local mode (an agent over stdio per call)', { concurrency: 4 }, () => {
  const local = localMode({ root: ROOT, cli: { timeoutMs: 60_000 } }).cli;

  before(async () => {
    writeFileSync(join(ROOT, 'two-writes.action.yaml'), TWO_WRITES);
    expectCode(await local.run(['action', 'add', '--config', join(ROOT, 'two-writes.action.yaml')]), 0, 'action add');
  });

  it('use → execute (live progress) → diff → artifacts → apply --yes; the working tree is untouched until apply', async () => {
    const repo = makeRepo('lifecycle');
    await register(local, 'lifecycle', repo);
    const id = await use(local, 'builtin/replace', 'lifecycle', REPLACE);
    const before = snapshot(repo);

    const exec = await local.run(['plan', 'execute', id]);
    expectCode(exec, 0, 'execute');
    assert.match(exec.stdout, /^Executing in a sandbox$/m);
    assert.match(exec.stdout, /^Sandbox for local\/lifecycle: .* \(branch cleveragents\/plan-[0-9A-Z]{26}\)$/m);
    assert.match(exec.stdout, /^Checkpoint [0-9A-Z]{26} before execute$/m);
    assert.match(exec.stdout, /^Step 1\/1: builtin\/replace-in-files pattern=colour replacement=color /m);
    assert.match(exec.stdout, /^ {2}✓ .*checkpoint [0-9A-Z]{26}$/m);
    assert.match(exec.stdout, /^state: complete$/m);
    assert.match(exec.stdout, /^changed: 2 files \(\+3 -3\)$/m);
    assert.match(exec.stdout, new RegExp(`^next: agents plan diff ${id} ; agents plan apply ${id}$`, 'm'));
    assert.deepEqual(snapshot(repo), before, 'execute changed nothing the user can see');

    const [diff, artifacts, stat] = await Promise.all([
      local.run(['plan', 'diff', id]),
      local.run(['plan', 'artifacts', id]),
      local.run(['plan', 'diff', id, '--stat']),
    ]);
    expectCode(diff, 0, 'diff');
    assert.match(diff.stdout, /^diff --git a\/src\/a\.ts b\/src\/a\.ts$/m);
    assert.match(diff.stdout, /^-const colour = 1;$/m);
    assert.match(diff.stdout, /^\+const color = 1;$/m);
    assert.match(diff.stdout, /^src\/a\.ts\tmodified\t\+2\t-2$/m);
    assert.match(diff.stdout, /^total\t2\t\+3\t-3$/m);
    assert.equal(stat.stdout, 'src/a.ts\tmodified\t+2\t-2\nsrc/b.ts\tmodified\t+1\t-1\ntotal\t2\t+3\t-3\n');
    assert.deepEqual(
      artifacts.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')),
      [
        ['src/a.ts', 'edited', String('const color = 1;\nexport { color };\n'.length), '+2', '-2'],
        ['src/b.ts', 'edited', String('export const color2 = 2;\n'.length), '+1', '-1'],
      ],
    );
    assert.deepEqual(snapshot(repo), before);

    const apply = await local.run(['plan', 'apply', id, '--yes']);
    expectCode(apply, 0, 'apply');
    assert.match(apply.stdout, /^Applied to local\/lifecycle: commit [0-9a-f]{12} \(2 files\)$/m);
    assert.match(apply.stdout, /^state: applied$/m);
    assert.equal(git(repo, 'rev-list', '--count', 'main'), '2', 'one new commit');
    assert.equal(git(repo, 'rev-parse', 'HEAD^'), before['(HEAD)']);
    assert.equal(git(repo, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.equal(readFileSync(join(repo, 'src', 'a.ts'), 'utf8'), 'const color = 1;\nexport { color };\n');
    assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), '# colour\n', 'outside the glob nothing changed');
    const s = await status(local, id);
    assert.equal(`${s.phase}/${s.state}`, 'apply/applied');
    assert.equal(s.applied.commits[0].commit, git(repo, 'rev-parse', 'HEAD'));

    // Nothing more to do: execute after apply is invalid state, naming the phase and state.
    const again = await local.run(['plan', 'execute', id]);
    expectCode(again, 5, 'execute after apply');
    assert.match(again.stderr, /BusinessRuleViolation/);
    assert.match(again.stderr, /^phase: apply$/m);
    assert.match(again.stderr, /^state: applied$/m);
  });

  it('a conflict at apply exits 10 listing the file, and leaves the working tree and branch as they were', async () => {
    const repo = makeRepo('conflict');
    await register(local, 'conflict', repo);
    const id = await use(local, 'builtin/replace', 'conflict', REPLACE);
    expectCode(await local.run(['plan', 'execute', id]), 0, 'execute');
    // Meanwhile, the user changes the same line on their branch.
    writeFileSync(join(repo, 'src', 'a.ts'), 'const colour = 42;\nexport { colour };\n');
    git(repo, 'commit', '-q', '-am', 'the user was faster');
    const before = snapshot(repo);

    const apply = await local.run(['plan', 'apply', id, '--yes']);
    expectCode(apply, 10, 'apply with a conflict');
    assert.match(apply.stderr, /^error: Plan [0-9A-Z]{26} was not applied: .*conflict.* \(PlanError\)$/m);
    assert.match(apply.stderr, /^file: src\/a\.ts$/m);
    assert.match(apply.stderr, /^hint: /m);
    assert.deepEqual(snapshot(repo), before, 'a failed apply changes nothing');
    const s = await status(local, id);
    assert.equal(`${s.phase}/${s.state}`, 'apply/errored');
    assert.equal(s.error.kind, 'conflict');
    assert.deepEqual(s.error.files, ['src/a.ts']);
  });

  it('rollback to a checkpoint, then execute resumes from it; corrections revert and append', async () => {
    const repo = makeRepo('rollback');
    await register(local, 'rollback', repo);
    const id = await use(local, 'two-writes', 'rollback', ['--automation-profile', 'auto']);
    expectCode(await local.run(['plan', 'execute', id]), 0, 'execute');
    const s1 = await status(local, id);
    assert.deepEqual(
      s1.checkpoints.map((c: { label: string }) => c.label),
      ['before-execute', 'after-step:1', 'after-step:2', 'before-apply'],
    );
    const cp = s1.checkpoints[1];
    assert.match(cp.id, ULID);

    const rb = await local.run(['plan', 'rollback', cp.id]);
    expectCode(rb, 0, 'rollback');
    assert.match(rb.stdout, /^state: queued$/m);
    assert.match(rb.stdout, /^steps: 1\/2$/m);
    assert.deepEqual(
      (await local.ok(['plan', 'diff', id])).sandboxes[0].files.map((f: { path: string }) => f.path),
      ['first.txt'],
    );
    const resumed = await local.run(['plan', 'execute', id]);
    expectCode(resumed, 0, 'execute after rollback');
    assert.match(resumed.stdout, /^Resuming execute at step 2$/m);
    assert.match(resumed.stdout, new RegExp(`^Restored checkpoint ${cp.id} \\(after-step:1\\)$`, 'm'));
    assert.doesNotMatch(resumed.stdout, /Step 1\/2/);
    assert.match(resumed.stdout, /^Step 2\/2: builtin\/write-file path=second\.txt/m);

    // Revert the second step: superseded, re-strategized with the guidance; the attempt goes up.
    const tree = await local.ok(['plan', 'tree', id]);
    const step2 = tree.decisions[0].children.find((d: { stepIndex?: number }) => d.stepIndex === 1);
    const dry = await local.ok([
      'plan',
      'correct',
      step2.id,
      '--mode',
      'revert',
      '--guidance',
      'write it again',
      '--dry-run',
    ]);
    assert.deepEqual(dry.wouldSupersede, [step2.id]);
    assert.equal(dry.attempt, 1);
    const reverted = await local.ok(['plan', 'correct', step2.id, '--mode', 'revert', '--guidance', 'write it again']);
    assert.equal(reverted.attempt, 2);
    assert.deepEqual(reverted.superseded, [step2.id]);
    const explained = await local.ok(['plan', 'explain', step2.id, '--plan', id]);
    assert.equal(explained.planId, id);
    assert.equal(explained.decision.id, step2.id);
    assert.equal(explained.decision.superseded, true, 'the reverted step is superseded');
    assert.ok(explained.toolCalls.length >= 1, 'the step made its tool call');
    for (const c of explained.toolCalls) assert.equal(c.tool, 'builtin/write-file');
    const listed = await local.ok(['plan', 'list', '--project', 'rollback']);
    assert.equal(listed.plans.length, 1, 'plan list --project finds the plan');
    assert.equal(listed.plans[0].planId, id);
    assert.ok(listed.plans[0].counts.decisions >= 4, `plan list counts decisions: ${listed.plans[0].counts.decisions}`);
    assert.ok(listed.plans[0].counts.checkpoints >= 2, 'plan list counts checkpoints');
    const [withSuperseded, plainTree, activeOnly] = await Promise.all([
      local.ok(['plan', 'tree', id, '--show-superseded']),
      local.run(['plan', 'tree', id, '--show-superseded']),
      local.run(['plan', 'tree', id]),
    ]);
    const old = withSuperseded.decisions[0].children.find((d: { id: string }) => d.id === step2.id);
    assert.equal(old.superseded, true);
    assert.match(plainTree.stdout, new RegExp(`^${step2.id}\\t1\\tstep\\t1\\tsuperseded\\tStep 2 of 2`, 'm'));
    assert.match(plainTree.stdout, /^[0-9A-Z]{26}\t1\tguidance\t2\tactive\tCorrection \(revert\)/m);
    assert.doesNotMatch(
      activeOnly.stdout,
      new RegExp(`^${step2.id}\t`, 'm'),
      'superseded decisions only with --show-superseded',
    );
    const again = await local.run(['plan', 'execute', id]);
    expectCode(again, 0, 'execute after the revert');
    assert.match(again.stdout, /^Step 2\/2: builtin\/write-file/m);

    const newStep2 = (await local.ok(['plan', 'tree', id])).decisions[0].children.find(
      (d: { type: string; stepIndex?: number }) => d.type === 'step' && d.stepIndex === 1,
    );
    const appended = await local.run([
      'plan',
      'correct',
      newStep2.id,
      '--mode',
      'append',
      '--guidance',
      'keep it short',
    ]);
    expectCode(appended, 0, 'correct --mode append');
    assert.match(appended.stdout, /^mode: append$/m);
    assert.match(appended.stdout, /^attempt: 3$/m);
    assert.equal((await status(local, id)).attempt, 3);
  });

  it('no chat path into a plan: builtin/planner is no actor, a plan context takes no messages', async () => {
    const repo = makeRepo('no-bypass');
    await register(local, 'no-bypass', repo);
    const id = await use(local, 'builtin/replace', 'no-bypass', REPLACE);
    const before = snapshot(repo);
    const planner = await local.run(['session', 'create', '--actor', 'builtin/planner']);
    expectCode(planner, 3, 'session create --actor builtin/planner');
    assert.match(planner.stderr, /No actor named builtin\/planner/);
    const s = await status(local, id);
    // A plan's context is no chat session (the raw SendMessage there is refused: see the contract suite).
    const chat = await local.run(['send', '--session', s.contextId, 'apply it']);
    expectCode(chat, 3, "send into the plan's context");
    assert.match(chat.stderr, /Session plan-\S+ was not found/);
    const after = await status(local, id);
    assert.equal(`${after.phase}/${after.state}`, 'strategize/complete');
    assert.deepEqual(snapshot(repo), before);
  });

  it('approvals (manual profile, no terminal): exit 5 leaves the plan waiting; approve approves; prompt no, send --task no and reject reject; --yes approves', async () => {
    const repo = makeRepo('approvals');
    await register(local, 'approvals', repo);
    const manual = [...REPLACE, '--automation-profile', 'manual'];
    const [yes, no, auto, promptNo] = await Promise.all([
      use(local, 'builtin/replace', 'approvals', manual),
      use(local, 'builtin/replace', 'approvals', manual),
      use(local, 'builtin/replace', 'approvals', manual),
      use(local, 'builtin/replace', 'approvals', manual),
    ]);

    // Illegal: apply before execute names the phase and state.
    const early = await local.run(['plan', 'apply', no, '--yes']);
    expectCode(early, 5, 'apply before execute');
    assert.match(early.stderr, /^phase: strategize$/m);
    assert.match(early.stderr, /^state: complete$/m);
    assert.match(early.stderr, /^allowed: execute, /m);

    const [waitYes, waitNo, waitPromptNo] = await Promise.all([
      local.run(['plan', 'execute', yes]),
      local.run(['plan', 'execute', no]),
      local.run(['plan', 'execute', promptNo]),
    ]);
    for (const w of [waitYes, waitNo, waitPromptNo]) {
      expectCode(w, 5, 'execute that needs an approval');
      assert.match(w.stdout, /^Approve step 1\/1: builtin\/replace-in-files /m);
      assert.match(
        w.stderr,
        /needs approval for step 1\/1: builtin\/replace-in-files; run again with --yes, or answer with agents plan approve \S+ or agents plan reject \S+ \(a plan made with agents plan use … --automation-profile auto does not ask\)/,
      );
    }
    const [sYes, sNo] = await Promise.all([status(local, yes), status(local, no)]);
    assert.equal(sYes.waiting.kind, 'tool-approval');
    assert.equal(sNo.waiting.kind, 'tool-approval');

    const [approved, rejected, auto1, saidNo] = await Promise.all([
      local.run(['plan', 'approve', yes]),
      local.run(['send', '--task', sNo.waiting.taskId, 'no']),
      local.run(['plan', 'execute', auto, '--yes']),
      local.run(['plan', 'prompt', promptNo, 'no']),
    ]);
    expectCode(approved, 0, 'approve');
    assert.match(approved.stdout, /^ {2}✓ /m);
    assert.match(approved.stdout, /^state: complete$/m);
    expectCode(rejected, 0, 'send --task … no');
    expectCode(auto1, 0, 'execute --yes');
    assert.doesNotMatch(auto1.stdout, /Approve step/);
    expectCode(saidNo, 0, 'prompt … no');
    assert.doesNotMatch(saidNo.stdout, /^ {2}✓ /m, '"no" ran nothing');
    const [dYes, dNo, dAuto, dPromptNo, tNo, tPromptNo] = await Promise.all([
      local.ok(['plan', 'diff', yes]),
      local.ok(['plan', 'diff', no]),
      local.ok(['plan', 'diff', auto]),
      local.ok(['plan', 'diff', promptNo]),
      local.ok(['plan', 'tree', no]),
      local.ok(['plan', 'tree', promptNo]),
    ]);
    assert.equal(dYes.stats.files, 2, 'approved: the step ran');
    assert.equal(dNo.stats.files, 0, 'rejected: the step was skipped');
    assert.equal(dAuto.stats.files, 2);
    assert.equal(dPromptNo.stats.files, 0, 'plan prompt … no rejects, as the same text on the task does');
    for (const t of [tNo, tPromptNo]) {
      const approval = t.decisions[0].children[0].children[0];
      assert.equal(approval.type, 'approval');
      assert.equal(approval.chosen, 'reject');
    }

    // The apply needs approval too: without --yes it waits; apply --yes answers the waiting request.
    const before = snapshot(repo);
    const waitApply = await local.run(['plan', 'apply', yes]);
    expectCode(waitApply, 5, 'apply without --yes');
    assert.match(waitApply.stderr, /needs approval for apply \(2 files\)/);
    assert.deepEqual(snapshot(repo), before);
    assert.equal((await status(local, yes)).waiting.kind, 'apply-approval');
    // Guidance never approves: prompt with words rejects; reject --guidance too. Nothing lands.
    const guided = await local.run(['plan', 'prompt', yes, 'go', 'ahead']);
    // Declining is what was asked (as plan reject does): it says so, and succeeds.
    expectCode(guided, 0, 'guidance on the waiting apply declines it');
    assert.match(guided.stdout, /^Apply declined \(go ahead\); the plan stays ready to apply$/m);
    assert.deepEqual(snapshot(repo), before);
    const sGuided = await status(local, yes);
    assert.equal(`${sGuided.phase}/${sGuided.state}`, 'execute/complete');
    assert.equal(sGuided.waiting, undefined);
    expectCode(await local.run(['plan', 'apply', yes]), 5, 'apply waits again');
    const declined = await local.run(['plan', 'reject', yes, '--guidance', 'after the release']);
    // Rejecting is what was asked: it says what happened and what next, and succeeds.
    expectCode(declined, 0, 'reject the apply');
    assert.match(declined.stdout, /^Apply declined \(after the release\); the plan stays ready to apply$/m);
    assert.match(declined.stdout, /^next: .*agents plan apply \S+$/m);
    assert.doesNotMatch(declined.stderr, /error/);
    assert.deepEqual(snapshot(repo), before);
    const notWaiting = await local.run(['plan', 'approve', yes]);
    expectCode(notWaiting, 5, 'approve with nothing waiting');
    assert.match(notWaiting.stderr, /approve needs a plan that waits for an approval/);
    expectCode(await local.run(['plan', 'apply', yes]), 5, 'apply waits again');
    const applied = await local.run(['plan', 'apply', yes, '--yes']);
    expectCode(applied, 0, 'apply --yes on the waiting plan');
    assert.match(applied.stdout, /^state: applied$/m);
    assert.equal(git(repo, 'rev-list', '--count', 'main'), '2');
  });
});

describe('plans through the CLI, server mode (HTTP to one agents serve)', { concurrency: 3 }, () => {
  const remote = serverMode({ root: ROOT, token: TOKEN, cli: { timeoutMs: 60_000 } }).cli;

  it('cancel during a slow command: execute ends promptly, the plan is cancelled, the command is gone', async () => {
    const repo = makeRepo('cancel');
    await register(remote, 'cancel', repo);
    const id = await use(remote, 'builtin/run-command', 'cancel', [
      '--arg',
      'command=sleep 599.25',
      '--automation-profile',
      'auto',
    ]);
    let ready!: () => void;
    const stepShown = new Promise<void>((r) => (ready = r));
    const exec = remote.run(['plan', 'execute', id], {
      onStdout: (out) => {
        if (/^Step 1\/1: builtin\/run-command command=sleep 599\.25$/m.test(out)) ready();
      },
    });
    await stepShown;
    await eventually(
      async () => (pidsOf(['sleep', '599.25']).length > 0 ? true : undefined),
      10_000,
      'the sleep to run',
    );
    const cancel = await remote.run(['plan', 'cancel', id, '--reason', 'too slow']);
    expectCode(cancel, 0, 'cancel');
    assert.match(cancel.stdout, /^state: cancelled$/m);
    // The command would sleep for ten minutes: execute ending at all (within collect's 60 s) shows the cancel stopped it.
    const ended = await exec;
    expectCode(ended, 9, 'the cancelled execute');
    assert.match(ended.stdout, /^state: cancelled$/m);
    // On a server the cancel may come from anyone who may write the plan: the follower is told who.
    const me = await remote.ok(['whoami']);
    const user = (me.user ?? me.whoami?.user) as string;
    assert.match(
      ended.stderr,
      new RegExp(
        `^error: plan ${id} was cancelled by ${user} during its execute phase: too slow \\(PlanCancelled\\)$`,
        'm',
      ),
    );
    await eventually(
      async () => (pidsOf(['sleep', '599.25']).length === 0 ? true : undefined),
      5000,
      'the sleep to be killed',
    );
    const s = await status(remote, id);
    assert.equal(`${s.phase}/${s.state}`, 'execute/cancelled');
    assert.ok(existsSync(s.sandboxes[0].root), 'the sandbox stays for inspection');
    assert.equal(s.error.cancelledBy, user);
    assert.equal(s.error.message, `cancelled by ${user}: too slow`);
  });

  it('approvals over HTTP: exit 5 leaves the plan waiting; approve approves, send --task no rejects, --yes approves', async () => {
    const repo = makeRepo('http-approvals');
    await register(remote, 'http-approvals', repo);
    const manual = [...REPLACE, '--automation-profile', 'manual'];
    const [yes, no, auto] = await Promise.all([
      use(remote, 'builtin/replace', 'http-approvals', manual),
      use(remote, 'builtin/replace', 'http-approvals', manual),
      use(remote, 'builtin/replace', 'http-approvals', manual),
    ]);
    const [waitYes, waitNo, auto1] = await Promise.all([
      remote.run(['plan', 'execute', yes]),
      remote.run(['plan', 'execute', no]),
      remote.run(['plan', 'execute', auto, '--yes']),
    ]);
    expectCode(waitYes, 5, 'execute waiting for approval');
    expectCode(waitNo, 5, 'execute waiting for approval');
    assert.match(waitYes.stderr, /needs approval for step 1\/1/);
    expectCode(auto1, 0, 'execute --yes');
    const sNo = await status(remote, no);
    assert.equal(sNo.waiting.kind, 'tool-approval');
    const [approved, rejected] = await Promise.all([
      remote.run(['plan', 'approve', yes]),
      remote.run(['send', '--task', sNo.waiting.taskId, 'no']),
    ]);
    expectCode(approved, 0, 'approve');
    assert.match(approved.stdout, /^state: complete$/m);
    expectCode(rejected, 0, 'send --task no');
    const [dYes, dNo, dAuto] = await Promise.all([
      remote.ok(['plan', 'diff', yes]),
      remote.ok(['plan', 'diff', no]),
      remote.ok(['plan', 'diff', auto]),
    ]);
    assert.equal(dYes.stats.files, 2);
    assert.equal(dNo.stats.files, 0);
    assert.equal(dAuto.stats.files, 2);
    const sNoAfter = await status(remote, no);
    assert.equal(`${sNoAfter.phase}/${sNoAfter.state}`, 'execute/complete');
  });

  it('resume after the server is killed (SIGKILL) in the middle of execute', async () => {
    const dataDir = join(ROOT, 'server-killed');
    let killable = await startServer(dataDir);
    const t = agentsCli({
      dataDir: join(ROOT, 'client-unused'),
      configHome: join(ROOT, 'no-config'),
      prefix: () => ['--server', killable.url, '--token', TOKEN],
      timeoutMs: 60_000,
    });
    try {
      const repo = makeRepo('killed');
      writeFileSync(join(ROOT, 'slow-write.action.yaml'), SLOW_WRITE);
      expectCode(await t.run(['action', 'add', '--config', join(ROOT, 'slow-write.action.yaml')]), 0, 'action add');
      await register(t, 'killed', repo);
      const id = await use(t, 'slow-write', 'killed', ['--automation-profile', 'auto']);
      let ready!: () => void;
      const sleeping = new Promise<void>((r) => (ready = r));
      const exec = t.run(['plan', 'execute', id], {
        onStdout: (out) => {
          if (/^Step 1\/2: builtin\/run-command command=sleep 2$/m.test(out)) ready();
        },
      });
      await sleeping;
      await killable.stop('SIGKILL');
      const cut = await exec;
      expectCode(cut, 6, 'execute whose server died');
      assert.match(cut.stderr, /lost the connection to the agent/);
      assert.match(cut.stderr, new RegExp(`agents plan execute ${id} resumes`));

      killable = await startServer(dataDir);
      // Settled at start (issue #8, defect 7): no longer execute/processing with nothing running it.
      const s = await status(t, id);
      assert.equal(`${s.phase}/${s.state}`, 'execute/errored');
      assert.equal(s.running, false);
      assert.equal(s.error.kind, 'interrupted');
      assert.equal(s.error.recoverable, true);
      assert.match(s.error.hint, new RegExp(`agents plan execute ${id} resumes from the last checkpoint`));
      const resumed = await t.run(['plan', 'execute', id]);
      expectCode(resumed, 0, 'execute after the restart');
      assert.match(resumed.stdout, /^Resuming execute at step 1$/m);
      assert.match(resumed.stdout, /^Restored checkpoint [0-9A-Z]{26} \(before-execute\)$/m);
      assert.match(resumed.stdout, /^Step 2\/2: builtin\/write-file path=out\.txt/m);
      assert.match(resumed.stdout, /^state: complete$/m);
      const diff = await t.ok(['plan', 'diff', id]);
      assert.deepEqual(
        diff.sandboxes[0].files.map((f: { path: string }) => f.path),
        ['out.txt'],
      );
    } finally {
      await killable.stop();
    }
  });
});

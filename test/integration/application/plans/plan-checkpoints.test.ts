/**
 * A plan's checkpoints hold exactly what its sandbox held after each step, whichever way the
 * checkpoint was made: of the paths the built-in file tools reported, or by git scanning the whole
 * sandbox after a command.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL } from '../../../../src/application/index.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';
import { initRepo } from '../../../support/git.ts';

describe("a plan's checkpoints", () => {
  let app: App;
  let dir: string;
  let git: (...args: string[]) => string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-checkpoints-'));
    app = await buildApp({
      dataDir: dir,
      inMemory: true,
      validateResults: true,
      confinement: { mode: 'none' },
      card: { endpoint: 'memory://', auth: 'none' },
    });
    git = initRepo(join(dir, 'repo'), { 'a.txt': 'one\n', 'src/b.ts': 'b\n', '.gitignore': 'build/\n' });
    const r = app.facade.registry;
    await r.add(
      'resource',
      { definition: { name: 'local/cp-repo', type: 'git-checkout', path: join(dir, 'repo'), branch: 'main' } },
      LOCAL_PRINCIPAL,
    );
    await r.add('project', { definition: { name: 'local/cp', resources: ['local/cp-repo'] } }, LOCAL_PRINCIPAL);
    await r.add(
      'action',
      {
        definition: {
          name: 'local/cp-mixed',
          descriptionTemplate: 'mixed steps',
          definitionOfDone: 'done',
          steps: [
            { tool: 'builtin/write-file', args: { path: 'new/c.txt', content: 'c\n' } },
            { tool: 'builtin/write-file', args: { path: 'build/out.js', content: 'ignored\n' } },
            { tool: 'builtin/run-command', args: { program: 'sh', args: ['-c', 'printf d > d.txt && rm a.txt'] } },
            { tool: 'builtin/edit-file', args: { path: 'src/b.ts', find: 'b', replace: 'bee' } },
            { tool: 'builtin/write-file', args: { path: 'new/c.txt', content: 'see\n' } },
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

  it('hold what the sandbox held after each step', async () => {
    const plans = app.facade.plans;
    const used = await plans.use({ action: 'local/cp-mixed', projects: ['local/cp'] }, LOCAL_PRINCIPAL);
    const planId = used.plan.planId;
    const ex = await plans.execute(planId, { wait: true, yes: true }, LOCAL_PRINCIPAL);
    assert.equal(ex.task?.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(ex.task?.status));
    const branch = `cleveragents/plan-${planId}`;
    const commits = new Map(
      git('log', '--format=%s %H', branch)
        .split('\n')
        .map((l) => [l.slice(0, l.lastIndexOf(' ')), l.slice(l.lastIndexOf(' ') + 1)]),
    );
    const files = (label: string): Record<string, string> => {
      const c = commits.get(`checkpoint: ${label}`);
      assert.ok(c, `a checkpoint ${label}`);
      const names = git('ls-tree', '-r', '--name-only', c).split('\n');
      return Object.fromEntries(names.map((n) => [n, git('show', `${c}:${n}`)]));
    };
    const base = { '.gitignore': 'build/', 'a.txt': 'one', 'src/b.ts': 'b' };
    assert.deepEqual(files('after-step:1'), { ...base, 'new/c.txt': 'c' });
    assert.deepEqual(files('after-step:2'), { ...base, 'new/c.txt': 'c' }, 'an ignored file stays out');
    const afterCommand = { '.gitignore': 'build/', 'src/b.ts': 'b', 'new/c.txt': 'c', 'd.txt': 'd' };
    assert.deepEqual(files('after-step:3'), afterCommand, "the command's changes, reported by nobody");
    assert.deepEqual(files('after-step:4'), { ...afterCommand, 'src/b.ts': 'bee' });
    const last = { ...afterCommand, 'src/b.ts': 'bee', 'new/c.txt': 'see' };
    assert.deepEqual(files('after-step:5'), last);
    assert.deepEqual(files('before-apply'), last);
    const sandbox = (await app.facade.planQueries.status(planId, LOCAL_PRINCIPAL)).sandboxes?.[0]?.root;
    assert.ok(sandbox);
    const inSandbox = (...args: string[]): string => git('-C', sandbox, ...args);
    assert.equal(inSandbox('status', '--porcelain'), '', 'the index holds the last checkpoint');
    inSandbox('fsck', '--strict', '--no-dangling');
    await plans.cancel(planId, undefined, LOCAL_PRINCIPAL);
  });
});

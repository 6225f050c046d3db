/**
 * Two `agents serve` instances on one PostgreSQL database with different data directories (issue
 * #40, point 8): a plan executed on A has its sandbox in A's data directory. On B, `plan diff` and
 * `plan apply` answer UNAVAILABLE with the documented message and a hint naming where the sandbox
 * is — never "Internal error" — and the plan stays as it was; on A the same plan applies.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, type Agents, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { twoWritesAction } from '../support/registry-fixtures.ts';
import { startHttpServer, tempDir, type HttpServerProcess } from '../support/harness.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../support/postgres.ts';

const TOKEN = 'e2e-elsewhere-token-0123456789abcd';

const TWO_WRITES = twoWritesAction('local/el-two-writes');

function expectCode(res: CliResult, code: number, what: string): void {
  assert.equal(res.code, code, `${what}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

describe("a plan's sandbox on another instance's data directory", { skip: pgSkip() }, () => {
  let root: string;
  let db: PgTestDatabase;
  let a: HttpServerProcess;
  let b: HttpServerProcess;
  let onA: Agents;
  let onB: Agents;

  before(async () => {
    root = tempDir('ca-elsewhere-e2e-');
    db = await createPgDatabase('ca_elsewhere');
    const env = { ...process.env, CLEVERAGENTS_DATABASE_URL: db.url };
    a = await startHttpServer({ dataDir: join(root, 'data-a'), env, token: TOKEN });
    b = await startHttpServer({ dataDir: join(root, 'data-b'), env, token: TOKEN });
    const cli = (server: HttpServerProcess): Agents =>
      agentsCli({
        dataDir: join(root, 'client-unused'),
        configHome: join(root, 'no-config'),
        prefix: () => ['--server', server.baseUrl, '--token', TOKEN],
        timeoutMs: 60_000,
      });
    onA = cli(a);
    onB = cli(b);
  });
  after(async () => {
    await Promise.all([a, b].map((s) => s?.stop().catch(() => null)));
    await db?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('plan diff and plan apply on B answer UNAVAILABLE with where the sandbox is, and the plan stays ready on A', async () => {
    const repo = join(root, 'repo');
    mkdirSync(repo, { recursive: true });
    initRepo(repo, { 'README.md': '# el\n' });
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    writeFileSync(join(root, 'two-writes.action.yaml'), TWO_WRITES);
    expectCode(await onA.run(['action', 'add', '--config', join(root, 'two-writes.action.yaml')]), 0, 'action add');
    expectCode(
      await onA.run(['resource', 'add', 'git-checkout', 'el', '--path', repo, '--branch', 'main']),
      0,
      'resource add',
    );
    expectCode(await onA.run(['project', 'create', 'el', '--resource', 'el']), 0, 'project create');
    const used = await onA.ok(['plan', 'use', 'el-two-writes', 'el', '--automation-profile', 'auto']);
    const id = used.plan.planId as string;
    expectCode(await onA.run(['plan', 'execute', id]), 0, 'execute on A');
    const before = await onB.ok(['plan', 'status', id]);
    assert.equal(`${before.phase}/${before.state}`, 'execute/complete');

    const sandboxes = join(root, 'data-a', 'sandboxes');
    for (const args of [
      ['plan', 'diff', id],
      ['plan', 'apply', id, '--yes'],
    ]) {
      const r = await onB.run(args);
      assert.notEqual(r.code, 0, `${args.join(' ')} on B: ${r.stdout}`);
      assert.doesNotMatch(r.stderr, /Internal error/);
      assert.match(
        r.stderr,
        /The plan's sandbox \S+ is not reachable from this instance \(.+\), whose sandbox directory is /,
      );
      assert.ok(
        r.stderr.includes(`it is in ${sandboxes}, the sandbox directory of the instance that executed the plan`),
        r.stderr,
      );
    }
    const after = await onB.ok(['plan', 'status', id]);
    assert.deepEqual(
      { phase: after.phase, state: after.state, error: after.error, tasks: after.tasks },
      { phase: before.phase, state: before.state, error: before.error, tasks: before.tasks },
      'the plan is as it was',
    );
    assert.equal(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim(), head);

    // On A, which holds the sandbox, the same plan diffs and applies.
    const diff = await onA.ok(['plan', 'diff', id]);
    assert.equal(diff.stats.files, 2);
    expectCode(await onA.run(['plan', 'apply', id, '--yes']), 0, 'apply on A');
    assert.equal(
      execFileSync('git', ['show', 'HEAD:second.txt'], { cwd: repo, encoding: 'utf8' }),
      'two',
      'applied on A',
    );
  });
});

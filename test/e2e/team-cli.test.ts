/**
 * A team through the CLI, against a real `agents serve` on 127.0.0.1 (issue #11): the admin makes
 * a namespace and a member's key; the member logs in, runs a plan in the namespace and cannot see
 * another namespace's tasks; a viewer cannot write; revoking the member's key stops the next
 * request; the audit log has it all.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliPerson } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { findKey } from '../support/team-server.ts';

const ADMIN = 'team-cli-admin-token-0123456789abcdef';

describe('a team through the CLI: namespace, member key, login, a plan, a viewer, revocation', () => {
  const root = mkdtempSync(join(tmpdir(), 'agents-team-cli-'));
  const repo = join(root, 'repo');
  let server: HttpServerProcess;
  let aliceKey: string;
  let vicKey: string;
  let planId: string;

  /** The CLI as one person: their own config directory (their stored login). */
  const as = (who: string) => cliPerson(root, who, { env: { CLEVERAGENTS_CONFINEMENT: 'none' } });
  const admin = as('admin');
  const alice = as('alice');
  const vic = as('vic');

  before(async () => {
    initRepo(repo, { 'src/a.ts': 'const colour = 1;\nexport { colour };\n', 'README.md': '# colour\n' });
    server = await startHttpServer({
      dataDir: join(root, 'server'),
      token: ADMIN,
      env: { ...process.env, CLEVERAGENTS_CONFINEMENT: 'none', CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '0' },
    });
    await admin.ok(['login', '--server', server.baseUrl], `${ADMIN}\n`);
  });
  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('the admin makes a namespace and keys for a member and a viewer', async () => {
    assert.equal((await admin.ok(['whoami'])).admin, true);
    await admin.ok(['namespace', 'create', 'team']);
    await admin.ok(['namespace', 'create', 'other']);
    aliceKey = findKey(await admin.ok(['user', 'add', 'alice'])) ?? '';
    vicKey = findKey(await admin.ok(['user', 'add', 'vic'])) ?? '';
    assert.ok(aliceKey && vicKey, 'user add shows each first key once');
    await admin.ok(['namespace', 'add-member', 'team', 'alice', '--role', 'member']);
    await admin.ok(['namespace', 'add-member', 'team', 'vic', '--role', 'viewer']);
    // The team's repository lives outside the server's workspaces: the admin lets team name it.
    const granted = await admin.ok(['namespace', 'grant', 'team', 'host-path', '--paths', root]);
    assert.deepEqual([granted.capability, granted.paths], ['host-path', [root]]);
    const revoked = await admin.ok(['namespace', 'revoke', 'other', 'runs-program']);
    assert.equal(revoked.revoked, false, 'other never held runs-program');
    // Something alice must not see: a task in a namespace she is not in.
    await admin.ok(['--tenant', 'other', 'send', 'the other namespace’s secret']);
  });

  it('the member logs in (stored 0600), runs a plan in the namespace, and sees only its tasks', async () => {
    const login = await alice.ok(['login', '--server', server.baseUrl], `${aliceKey}\n`);
    assert.equal(login.user ?? login.whoami?.user, 'alice', JSON.stringify(login));
    const me = await alice.ok(['whoami']);
    assert.deepEqual(me.namespaces.map((n: { name: string; role: string }) => `${n.name}:${n.role}`).sort(), [
      'alice:owner',
      'team:member',
    ]);
    const t = ['--tenant', 'team'];
    const grants = await alice.ok(['namespace', 'grants', 'team']);
    assert.deepEqual(
      grants.grants.map((g: { capability: string }) => g.capability),
      ['host-path'],
    );
    await alice.ok([...t, 'resource', 'add', 'git-checkout', 'team/repo', '--path', repo, '--branch', 'main']);
    await alice.ok([...t, 'project', 'create', 'team/app', '--resource', 'team/repo']);
    const used = await alice.ok([
      ...t,
      'plan',
      'use',
      'builtin/replace',
      'team/app',
      '--arg',
      'pattern=colour',
      '--arg',
      'replacement=color',
      '--arg',
      'glob=src/**/*.ts',
    ]);
    const id = used.plan.planId as string;
    planId = id;
    await alice.ok([...t, 'plan', 'execute', id]);
    await alice.ok([...t, 'plan', 'apply', id, '--yes']);
    assert.match(readFileSync(join(repo, 'src/a.ts'), 'utf8'), /const color = 1/);

    // The plan lives in team: seen there, not in alice's own namespace.
    const inTeam = await alice.ok([...t, 'plan', 'list']);
    assert.ok(inTeam.plans.some((p: { planId: string }) => p.planId === id));
    const own = await alice.ok(['plan', 'list']);
    assert.ok(!own.plans.some((p: { planId: string }) => p.planId === id));

    // Another namespace's tasks: not listed, and asking for the namespace looks like asking for none.
    const other = await alice.json(['--tenant', 'other', 'task', 'list']);
    const missing = await alice.json(['--tenant', 'no-such-ns', 'task', 'list']);
    assert.notEqual(other.exitCode, 0);
    assert.equal(other.exitCode, missing.exitCode);
    assert.equal(
      other.data.error.message.replace('other', '<ns>'),
      missing.data.error.message.replace('no-such-ns', '<ns>'),
    );
    const mine = await alice.ok([...t, 'task', 'list']);
    assert.ok(!JSON.stringify(mine).includes('secret'));
  });

  it('a viewer reads the namespace but cannot write to it, and nothing changes', async () => {
    await vic.ok(['login', '--server', server.baseUrl], `${vicKey}\n`);
    const t = ['--tenant', 'team'];
    const before = await vic.ok([...t, 'plan', 'list']);
    assert.ok(before.plans.length >= 1, 'a viewer reads');
    const write = await vic.json([...t, 'session', 'create']);
    assert.notEqual(write.exitCode, 0);
    assert.match(
      write.data.error.message,
      /needs permission session:write, and your role \(viewer\) does not grant it/,
    );
    const edit = await vic.json([...t, 'resource', 'remove', 'team/repo']);
    assert.notEqual(edit.exitCode, 0);
    assert.match(edit.data.error.message, /registry:write/);
    assert.ok((await vic.ok([...t, 'resource', 'show', 'team/repo'])).name === 'team/repo', 'still there');
  });

  it('revoking the member key stops the next request; the audit log records it all', async () => {
    const keys = await admin.ok(['key', 'list', '--user', 'alice']);
    for (const k of keys.keys as Array<{ id: string }>) await admin.ok(['key', 'revoke', k.id]);
    const after = await alice.json(['whoami']);
    assert.equal(after.exitCode, 4, 'authentication');
    assert.match(after.data.error.message, /revoked/);
    const audit = await admin.ok(['audit', 'list', '--limit', '200']);
    const events = new Set((audit.events as Array<{ event: string }>).map((e) => e.event));
    for (const e of [
      'namespace.created',
      'user.created',
      'member.added',
      'key.revoked',
      'request.refused',
      'auth.refused',
    ])
      assert.ok(events.has(e), `audit has ${e}: ${[...events].join(', ')}`);
  });

  it('the audit log answers who applied what, and who changed the registry', async () => {
    type Event = { event: string; principal?: string; namespace?: string; target?: string; details?: any };
    const applied = (await admin.ok(['audit', 'list', '--event', 'plan.applied'])).events as Event[];
    assert.equal(applied.length, 1, JSON.stringify(applied));
    const [a] = applied;
    assert.deepEqual([a?.principal, a?.namespace, a?.target], ['alice', 'team', planId]);
    assert.deepEqual(a?.details.projects, ['team/app']);
    assert.equal(a?.details.files, 1);
    assert.equal(a?.details.commits[0].resource, 'team/repo');
    assert.match(a?.details.commits[0].commit, /^[0-9a-f]{40}$/);

    const added = (await admin.ok(['audit', 'list', '--event', 'definition.added'])).events as Event[];
    const byName = (n: string) => added.find((e) => e.target === n);
    assert.deepEqual(
      [byName('team/repo')?.principal, byName('team/repo')?.namespace, byName('team/repo')?.details.kind],
      ['alice', 'team', 'resource'],
    );
    assert.equal(byName('team/app')?.details.kind, 'project');
    const text = await admin.run(['audit', 'list', '--event', 'plan.applied']);
    assert.match(text.stdout, new RegExp(`plan\\.applied[^\\n]*alice[^\\n]*${planId}`));
  });
});

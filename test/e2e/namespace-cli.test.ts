/**
 * End to end through the built CLI in local mode (an agent over stdio per call): a namespace is
 * created and is the local user's at once, holds entities and sessions, is refused deletion while
 * it holds them and deleted with them under --force; members cannot be added in local mode.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentsCli, type CliResult } from '../support/cli.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-namespace-e2e');
const DATA = join(ROOT, 'data');
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), cwd: ROOT, timeoutMs: 60_000 });

function expectCode(res: CliResult, ok: boolean, what: string): void {
  assert.equal(res.code === 0, ok, `${what}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

describe('agents namespace create|delete|add-member (local mode)', () => {
  it('creates a namespace that is yours at once, and refuses a second one of that name', async () => {
    const created = await cli.ok(['namespace', 'create', 'team']);
    assert.deepEqual([created.name, created.owner, created.role], ['team', 'local', 'owner']);
    const listed = await cli.ok(['namespace', 'list']);
    assert.deepEqual(
      listed.namespaces.map((n: { name: string; role: string }) => [n.name, n.role]),
      [
        ['local', 'owner'],
        ['team', 'owner'],
        ['builtin', 'viewer'],
      ],
    );
    const again = await cli.run(['namespace', 'create', 'team']);
    expectCode(again, false, 'create again');
    assert.match(again.stderr, /Namespace team already exists/);
    const reserved = await cli.run(['namespace', 'create', 'root']);
    expectCode(reserved, false, 'create root');
    assert.match(reserved.stderr, /Namespace root is reserved/);
  });

  it('deletes an empty namespace; refuses one holding things (counted) unless --force', async () => {
    expectCode(await cli.run(['namespace', 'create', 'empty']), true, 'create empty');
    const plain = await cli.run(['namespace', 'delete', 'empty']);
    expectCode(plain, true, 'delete empty');
    assert.match(plain.stdout, /^deleted: yes$/m);
    const gone = await cli.run(['namespace', 'show', 'empty']);
    expectCode(gone, false, 'show deleted');
    assert.match(gone.stderr, /Namespace empty was not found/);

    expectCode(await cli.run(['namespace', 'create', 'full']), true, 'create full');
    const dir = join(ROOT, 'docs');
    mkdirSync(dir, { recursive: true });
    expectCode(await cli.run(['resource', 'add', 'fs-directory', 'full/docs', '--path', dir]), true, 'resource add');
    expectCode(await cli.run(['resource', 'add', 'fs-directory', 'full/more', '--path', dir]), true, 'resource add');
    const refused = await cli.run(['namespace', 'delete', 'full']);
    expectCode(refused, false, 'delete full');
    assert.match(refused.stderr, /Namespace full is not empty: it holds 2 registry entities \(/);
    assert.equal((await cli.ok(['namespace', 'show', 'full'])).entities.resource, 2, 'nothing was deleted');

    const forced = await cli.ok(['namespace', 'delete', 'full', '--force']);
    assert.deepEqual(forced, {
      name: 'full',
      deleted: true,
      removed: { entities: 2, sessions: 0, tasks: 0, plans: 0 },
    });
    const listed = await cli.ok(['namespace', 'list']);
    assert.ok(!listed.namespaces.some((n: { name: string }) => n.name === 'full'));
    const resources = await cli.ok(['resource', 'list']);
    assert.ok(!JSON.stringify(resources).includes('full/docs'), 'its resource went with it');
  });

  it('never deletes local', async () => {
    const res = await cli.run(['namespace', 'delete', 'local', '--force']);
    expectCode(res, false, 'delete local');
    assert.match(res.stderr, /Namespace local cannot be deleted/);
  });

  it('refuses add-member in local mode, clearly, and set-role of the last owner', async () => {
    expectCode(await cli.run(['namespace', 'create', 'crew']), true, 'create crew');
    const add = await cli.run(['namespace', 'add-member', 'crew', 'bob', '--role', 'member']);
    expectCode(add, false, 'add-member');
    assert.match(add.stderr, /Namespace members are managed on a server: local mode has no other users/);
    const badRole = await cli.run(['namespace', 'add-member', 'crew', 'bob', '--role', 'boss']);
    expectCode(badRole, false, 'add-member --role boss');
    assert.match(badRole.stderr, /must be a role: owner, admin, member, viewer/);
    const demote = await cli.run(['namespace', 'set-role', 'crew', 'local', 'viewer']);
    expectCode(demote, false, 'set-role');
    assert.match(demote.stderr, /local is the last owner of crew and cannot be demoted/);
    const remove = await cli.run(['namespace', 'remove-member', 'crew', 'local']);
    expectCode(remove, false, 'remove-member');
    assert.match(remove.stderr, /last owner of crew and cannot be removed/);
    const members = await cli.ok(['namespace', 'members', 'crew']);
    assert.deepEqual(
      members.members.map((m: { principal: string; role: string }) => [m.principal, m.role]),
      [['local', 'owner']],
    );
  });
});

/**
 * End to end through the built CLI in local mode (an agent over stdio per call): a namespace is
 * created and is the local user's at once, holds entities and sessions, is refused deletion while
 * it holds them and deleted with them under --force; members cannot be added in local mode.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BIN, cliEnv, collect, type CliResult } from '../support/cli.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-namespace-e2e-'));
const DATA = join(ROOT, 'data');
after(() => rmSync(ROOT, { recursive: true, force: true }));

function run(args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(DATA, join(ROOT, 'no-config')),
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child, { timeoutMs: 60_000 });
}

function expectCode(res: CliResult, ok: boolean, what: string): void {
  assert.equal(res.code === 0, ok, `${what}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
}

async function json(args: string[]): Promise<any> {
  const res = await run(['--format', 'json', ...args]);
  expectCode(res, true, args.join(' '));
  return JSON.parse(res.stdout).data;
}

describe('agents namespace create|delete|add-member (local mode)', () => {
  it('creates a namespace that is yours at once, and refuses a second one of that name', async () => {
    const created = await json(['namespace', 'create', 'team']);
    assert.deepEqual([created.name, created.owner, created.role], ['team', 'local', 'owner']);
    const listed = await json(['namespace', 'list']);
    assert.deepEqual(
      listed.namespaces.map((n: { name: string; role: string }) => [n.name, n.role]),
      [
        ['local', 'owner'],
        ['team', 'owner'],
        ['builtin', 'viewer'],
      ],
    );
    const again = await run(['namespace', 'create', 'team']);
    expectCode(again, false, 'create again');
    assert.match(again.stderr, /Namespace team already exists/);
    const reserved = await run(['namespace', 'create', 'root']);
    expectCode(reserved, false, 'create root');
    assert.match(reserved.stderr, /Namespace root is reserved/);
  });

  it('deletes an empty namespace; refuses one holding things (counted) unless --force', async () => {
    expectCode(await run(['namespace', 'create', 'empty']), true, 'create empty');
    const plain = await run(['namespace', 'delete', 'empty']);
    expectCode(plain, true, 'delete empty');
    assert.match(plain.stdout, /^deleted: yes$/m);
    const gone = await run(['namespace', 'show', 'empty']);
    expectCode(gone, false, 'show deleted');
    assert.match(gone.stderr, /Namespace empty was not found/);

    expectCode(await run(['namespace', 'create', 'full']), true, 'create full');
    const dir = join(ROOT, 'docs');
    mkdirSync(dir, { recursive: true });
    expectCode(await run(['resource', 'add', 'fs-directory', 'full/docs', '--path', dir]), true, 'resource add');
    expectCode(await run(['resource', 'add', 'fs-directory', 'full/more', '--path', dir]), true, 'resource add');
    const refused = await run(['namespace', 'delete', 'full']);
    expectCode(refused, false, 'delete full');
    assert.match(refused.stderr, /Namespace full is not empty: it holds 2 registry entities \(/);
    assert.equal((await json(['namespace', 'show', 'full'])).entities.resource, 2, 'nothing was deleted');

    const forced = await json(['namespace', 'delete', 'full', '--force']);
    assert.deepEqual(forced, {
      name: 'full',
      deleted: true,
      removed: { entities: 2, sessions: 0, tasks: 0, plans: 0 },
    });
    const listed = await json(['namespace', 'list']);
    assert.ok(!listed.namespaces.some((n: { name: string }) => n.name === 'full'));
    const resources = await json(['resource', 'list']);
    assert.ok(!JSON.stringify(resources).includes('full/docs'), 'its resource went with it');
  });

  it('never deletes local', async () => {
    const res = await run(['namespace', 'delete', 'local', '--force']);
    expectCode(res, false, 'delete local');
    assert.match(res.stderr, /Namespace local cannot be deleted/);
  });

  it('refuses add-member in local mode, clearly, and set-role of the last owner', async () => {
    expectCode(await run(['namespace', 'create', 'crew']), true, 'create crew');
    const add = await run(['namespace', 'add-member', 'crew', 'bob', '--role', 'member']);
    expectCode(add, false, 'add-member');
    assert.match(add.stderr, /Namespace members are managed on a server: local mode has no other users/);
    const badRole = await run(['namespace', 'add-member', 'crew', 'bob', '--role', 'boss']);
    expectCode(badRole, false, 'add-member --role boss');
    assert.match(badRole.stderr, /must be a role: owner, admin, member, viewer/);
    const demote = await run(['namespace', 'set-role', 'crew', 'local', 'viewer']);
    expectCode(demote, false, 'set-role');
    assert.match(demote.stderr, /local is the last owner of crew and cannot be demoted/);
    const remove = await run(['namespace', 'remove-member', 'crew', 'local']);
    expectCode(remove, false, 'remove-member');
    assert.match(remove.stderr, /last owner of crew and cannot be removed/);
    const members = await json(['namespace', 'members', 'crew']);
    assert.deepEqual(
      members.members.map((m: { principal: string; role: string }) => [m.principal, m.role]),
      [['local', 'owner']],
    );
  });
});

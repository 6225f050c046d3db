import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  NamespaceService,
  type NamespaceWork,
  type UserDirectory,
} from '../../../../src/application/registry/namespace.service.ts';
import type { AuditEntry } from '../../../../src/application/accounts/audit.service.ts';
import { makePrincipal, type Principal } from '../../../../src/application/ports/principal.ts';
import type { Role } from '../../../../src/domain/permissions.ts';
import {
  openDatabase,
  SqliteNamespaceRepository,
  SqliteRegistryRepository,
  type SqliteDatabase,
} from '../../../../src/infrastructure/index.ts';

const AT = '2026-03-01T10:00:00.000Z';
const reason = (r: string, message?: RegExp) => (err: unknown) => {
  const e = err as { reason?: string; message?: string };
  assert.equal(e.reason, r, e.message);
  if (message) assert.match(e.message ?? '', message);
  return true;
};

describe('NamespaceService: create, delete, members and roles', () => {
  let db: SqliteDatabase;
  let repo: SqliteNamespaceRepository;
  let audit: AuditEntry[];
  let users: Set<string>;
  let running: number;
  let cleared: string[];

  const work: NamespaceWork = {
    runningPlans: () => Promise.resolve(running),
    clear: (ns) => {
      cleared.push(ns);
      return Promise.resolve();
    },
  };
  const directory: UserDirectory = { exists: (name) => Promise.resolve(users.has(name)) };

  function service(opts: { users?: UserDirectory | undefined } = { users: directory }): NamespaceService {
    return new NamespaceService(repo, new SqliteRegistryRepository(db), () => ({}), {
      users: opts.users,
      audit: {
        record: (e) => {
          audit.push(e);
          return Promise.resolve();
        },
      },
      work,
      now: () => new Date(AT),
    });
  }

  /** A principal with the roles the store says it has (as the authenticator builds them). */
  async function as(id: string, extra: Record<string, Role> = {}): Promise<Principal> {
    const roles: Record<string, Role> = {};
    for (const n of await repo.forPrincipal(id)) roles[n.name] = n.role;
    return makePrincipal({ id, roles: { ...roles, ...extra }, defaultNamespace: id });
  }

  beforeEach(async () => {
    db = await openDatabase({ file: ':memory:' });
    repo = new SqliteNamespaceRepository(db);
    audit = [];
    users = new Set(['alice', 'bob', 'carol']);
    running = 0;
    cleared = [];
  });
  afterEach(() => db.close());

  it('creates a namespace owned by its creator, and records it', async () => {
    const s = service();
    const created = await s.create('team', await as('alice'));
    assert.deepEqual(created, { name: 'team', owner: 'alice', role: 'owner', createdAt: AT, builtin: false });
    assert.deepEqual(await repo.members('team'), [{ principal: 'alice', role: 'owner', addedAt: AT }]);
    assert.deepEqual(
      audit.map((e) => [e.event, e.by?.id, e.namespace]),
      [['namespace.created', 'alice', 'team']],
    );
  });

  it("the local user's principal is read once while the store is unchanged; a new membership shows at once", async () => {
    const s = service({ users: undefined });
    const first = await s.localPrincipal();
    assert.deepEqual(first.roles, { local: 'owner' });
    assert.equal(await s.localPrincipal(), first, 'the same principal while nothing changed');
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.roles), 'shared, so frozen');
    await repo.create('synced', 'local', AT);
    const next = await s.localPrincipal();
    assert.deepEqual(next.roles, { synced: 'owner', local: 'owner' });
    await repo.setMember('synced', 'local', 'viewer', AT);
    assert.equal((await s.localPrincipal()).roles['synced'], 'viewer');
    await repo.removeMember('synced', 'local');
    assert.deepEqual((await s.localPrincipal()).roles, { local: 'owner' });
  });

  it('refuses reserved names and names taken, changing nothing', async () => {
    const s = service();
    const alice = await as('alice');
    for (const name of ['builtin', 'local', 'system', 'internal', 'admin', 'root'])
      await assert.rejects(s.create(name, alice), reason('INVALID_PARAMS', /reserved/));
    await s.create('team', alice);
    await assert.rejects(s.create('team', await as('bob')), reason('ALREADY_EXISTS', /Namespace team already exists/));
    assert.deepEqual(await repo.members('team'), [{ principal: 'alice', role: 'owner', addedAt: AT }]);
    assert.equal(audit.length, 1);
  });

  it("lists the caller's namespaces from its roles; one without a row is skipped", async () => {
    const s = service();
    await s.create('team', await as('alice'));
    // Roles from a JWT claim: team (stored) and ghost (no row).
    const p = makePrincipal({ id: 'dave', kind: 'jwt', roles: { team: 'viewer', ghost: 'owner' } });
    const { namespaces } = await s.list(p);
    assert.deepEqual(
      namespaces.map((n) => [n.name, n.role, n.owner]),
      [
        ['team', 'viewer', 'alice'],
        ['builtin', 'viewer', 'system'],
      ],
    );
    await assert.rejects(s.show('ghost', p), reason('NOT_FOUND', /^Namespace ghost was not found$/));
    assert.equal((await s.show('team', p)).role, 'viewer');
    assert.equal((await s.members('team', p)).members.length, 1);
  });

  it('a foreign namespace looks exactly like a missing one', async () => {
    const s = service();
    await s.create('team', await as('alice'));
    const bob = await as('bob');
    const foreign = await s.show('team', bob).catch((e: unknown) => e as Error & { reason: string; hint: string });
    const missing = await s.show('nope', bob).catch((e: unknown) => e as Error & { reason: string; hint: string });
    assert.equal(foreign instanceof Error && foreign.message, 'Namespace team was not found');
    assert.equal(missing instanceof Error && missing.message, 'Namespace nope was not found');
    assert.equal((foreign as { hint: string }).hint, (missing as { hint: string }).hint);
    await assert.rejects(
      s.addMember('team', 'carol', 'member', bob),
      reason('NOT_FOUND', /Namespace team was not found/),
    );
    await assert.rejects(s.delete('team', {}, bob), reason('NOT_FOUND', /Namespace team was not found/));
  });

  it('adds members (users that exist), audited with their role', async () => {
    const s = service();
    await s.create('team', await as('alice'));
    const alice = await as('alice');
    assert.deepEqual(await s.addMember('team', 'bob', 'member', alice), {
      namespace: 'team',
      user: 'bob',
      role: 'member',
    });
    assert.equal(await repo.roleOf('team', 'bob'), 'member');
    await assert.rejects(s.addMember('team', 'zed', 'member', alice), reason('NOT_FOUND', /User zed was not found/));
    await assert.rejects(s.addMember('team', 'bob', 'viewer', alice), reason('ALREADY_EXISTS', /already a member/));
    assert.equal(await repo.roleOf('team', 'bob'), 'member');
    const added = audit.filter((e) => e.event === 'member.added');
    assert.deepEqual(
      added.map((e) => [e.by?.id, e.namespace, e.target, e.details]),
      [['alice', 'team', 'bob', { role: 'member' }]],
    );
  });

  it('only an owner grants or takes away owner (mayAssign); an admin manages the rest', async () => {
    const s = service();
    await s.create('team', await as('alice'));
    await s.addMember('team', 'bob', 'admin', await as('alice'));
    const bob = await as('bob');
    await assert.rejects(s.addMember('team', 'carol', 'owner', bob), reason('FORBIDDEN', /Only an owner/));
    await s.addMember('team', 'carol', 'viewer', bob);
    await s.setRole('team', 'carol', 'member', bob);
    assert.equal(await repo.roleOf('team', 'carol'), 'member');
    await assert.rejects(s.setRole('team', 'carol', 'owner', bob), reason('FORBIDDEN', /Only an owner/));
    await assert.rejects(s.setRole('team', 'alice', 'admin', bob), reason('FORBIDDEN', /Only an owner/));
    await assert.rejects(s.removeMember('team', 'alice', bob), reason('FORBIDDEN', /Only an owner/));
    assert.equal(await repo.roleOf('team', 'alice'), 'owner');
    // A member or viewer manages no one.
    await assert.rejects(
      s.removeMember('team', 'bob', await as('carol')),
      reason('FORBIDDEN', /your role there is member/),
    );
    const changed = audit.filter((e) => e.event === 'member.role-changed');
    assert.deepEqual(
      changed.map((e) => [e.by?.id, e.target, e.details]),
      [['bob', 'carol', { role: 'member', previous: 'viewer' }]],
    );
  });

  it('the last owner can be neither removed nor demoted; with a second owner they can', async () => {
    const s = service();
    await s.create('team', await as('alice'));
    const alice = await as('alice');
    await assert.rejects(s.removeMember('team', 'alice', alice), reason('INVALID_STATE', /last owner/));
    await assert.rejects(s.setRole('team', 'alice', 'admin', alice), reason('INVALID_STATE', /last owner/));
    assert.equal(await repo.roleOf('team', 'alice'), 'owner');
    await s.addMember('team', 'bob', 'owner', alice);
    await s.setRole('team', 'alice', 'admin', alice);
    assert.equal(await repo.roleOf('team', 'alice'), 'admin');
    await s.removeMember('team', 'alice', await as('bob'));
    assert.equal(await repo.roleOf('team', 'alice'), undefined);
    await assert.rejects(s.removeMember('team', 'alice', await as('bob')), reason('NOT_FOUND', /not a member/));
    const removed = audit.filter((e) => e.event === 'member.removed');
    assert.deepEqual(
      removed.map((e) => [e.by?.id, e.target, e.details]),
      [['bob', 'alice', { role: null, previous: 'admin' }]],
    );
  });

  it('refuses member changes in local mode (no users), clearly', async () => {
    const s = service({ users: undefined });
    await s.create('team', await as('local'));
    await assert.rejects(
      s.addMember('team', 'bob', 'member', await as('local')),
      reason('UNSUPPORTED_OPERATION', /local mode has no other users/),
    );
    assert.equal(await repo.roleOf('team', 'bob'), undefined);
  });

  it('deletes an empty namespace with its memberships, audited', async () => {
    const s = service();
    await s.create('team', await as('alice'));
    await s.addMember('team', 'bob', 'viewer', await as('alice'));
    const r = await s.delete('team', {}, await as('alice'));
    assert.deepEqual(r, { name: 'team', deleted: true, removed: { entities: 0, sessions: 0, tasks: 0, plans: 0 } });
    assert.equal(await repo.get('team'), undefined);
    assert.deepEqual(await repo.members('team'), []);
    assert.deepEqual(cleared, []);
    assert.deepEqual(
      audit.filter((e) => e.event === 'namespace.deleted').map((e) => [e.by?.id, e.namespace, e.details]),
      [['alice', 'team', { force: false, removed: { entities: 0, sessions: 0, tasks: 0, plans: 0 } }]],
    );
  });

  it('refuses one with contents (counting them) unless forced, which deletes them all', async () => {
    const s = service();
    await s.create('team', await as('alice'));
    await fill(db, 'team');
    await fill(db, 'other');
    const alice = await as('alice');
    await assert.rejects(
      s.delete('team', {}, alice),
      reason('IN_USE', /holds 2 registry entities, 1 session, 2 tasks, 1 plan$/),
    );
    assert.ok(await repo.get('team'), 'nothing changed');
    assert.deepEqual(await repo.contents('team'), { entities: 2, sessions: 1, tasks: 2, plans: 1 });
    const r = await s.delete('team', { force: true }, alice);
    assert.deepEqual(r.removed, { entities: 2, sessions: 1, tasks: 2, plans: 1 });
    assert.deepEqual(cleared, ['team']);
    assert.deepEqual(await repo.contents('team'), { entities: 0, sessions: 0, tasks: 0, plans: 0 });
    assert.equal(await repo.get('team'), undefined);
    const refs = await db.kysely.selectFrom('registry_refs').selectAll().execute();
    assert.deepEqual(
      refs.map((x) => x.from_name),
      ['other/a'],
      "only the other namespace's references remain",
    );
    assert.deepEqual(await repo.contents('other'), { entities: 2, sessions: 1, tasks: 2, plans: 1 });
  });

  it('refuses while a plan of it runs, even forced', async () => {
    const s = service();
    await s.create('team', await as('alice'));
    running = 1;
    await assert.rejects(
      s.delete('team', { force: true }, await as('alice')),
      reason('INVALID_STATE', /1 running plan/),
    );
    assert.ok(await repo.get('team'));
    assert.deepEqual(cleared, []);
  });

  it('never deletes local, builtin or a user’s default namespace; only an owner deletes', async () => {
    const s = service();
    const local = await as('local');
    await assert.rejects(s.delete('local', { force: true }, local), reason('FORBIDDEN', /cannot be deleted/));
    await assert.rejects(s.delete('builtin', { force: true }, local), reason('FORBIDDEN', /cannot be deleted/));
    assert.ok(await repo.get('local'));
    await s.create('bobs', await as('alice'));
    await db.kysely
      .insertInto('users')
      .values({
        name: 'bob',
        display_name: null,
        admin: 0,
        default_namespace: 'bobs',
        external_id: null,
        created_at: AT,
        disabled_at: null,
      })
      .execute();
    await assert.rejects(s.delete('bobs', {}, await as('alice')), reason('FORBIDDEN', /default namespace of bob/));
    assert.ok(await repo.get('bobs'));
    await s.create('team', await as('alice'));
    await s.addMember('team', 'carol', 'admin', await as('alice'));
    await assert.rejects(s.delete('team', {}, await as('carol')), reason('FORBIDDEN', /Only an owner/));
    assert.ok(await repo.get('team'));
  });
});

/** Two registry entities (one referring to the other), a session with two tasks, and a plan in `ns`. */
async function fill(db: SqliteDatabase, ns: string): Promise<void> {
  const k = db.kysely;
  for (const name of ['a', 'b'])
    await k
      .insertInto('registry_entities')
      .values({
        kind: 'tool',
        name: `${ns}/${name}`,
        namespace: ns,
        type_field: null,
        revision: 1,
        content_hash: 'h',
        created_at: AT,
        updated_at: AT,
        definition: '{}',
      })
      .execute();
  await k
    .insertInto('registry_refs')
    .values({ from_kind: 'tool', from_name: `${ns}/a`, to_kind: 'tool', to_name: `${ns}/b` })
    .execute();
  await k
    .insertInto('sessions')
    .values({
      id: `s-${ns}`,
      owner: ns,
      actor: 'builtin/echo',
      title: null,
      created_at: AT,
      updated_at: AT,
      task_count: 2,
      project: null,
      skills: null,
    })
    .execute();
  for (const id of ['1', '2'])
    await k
      .insertInto('tasks')
      .values({
        id: `t-${ns}-${id}`,
        context_id: `s-${ns}`,
        owner: ns,
        state: 'TASK_STATE_COMPLETED',
        created_at: AT,
        updated_at: AT,
        seq: 0,
        snapshot: '{}',
        runner_id: null,
        message_id: null,
        message_hash: null,
      })
      .execute();
  await k
    .insertInto('plans')
    .values({
      id: `p-${ns}`,
      owner: ns,
      action: 'local/x',
      phase: 'strategize',
      state: 'complete',
      created_at: AT,
      updated_at: AT,
      doc: '{}',
    })
    .execute();
}

/**
 * SyncService's decisions over a real local store (in-memory database) and a fake server: where an
 * entity stands, what pull and push write, what they refuse, and auto-pull.
 */
import { sqliteOf } from '../../../support/sqlite-of.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  LOCAL_PRINCIPAL,
  makePrincipal,
  silentLogger,
  SyncService,
  syncStateOf,
  type RemoteConnection,
  type RemoteEntity,
  type SyncBase,
  type SyncRemote,
} from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import type { RegistryKind } from '../../../../src/domain/registry/entities.ts';
import { FsResourceInspector, SqliteNamespaceRepository } from '../../../../src/infrastructure/index.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';

const URL = 'http://server.test';
const tool = (name: string, description: string): Record<string, unknown> => ({
  name,
  description,
  source: 'command',
  command: { program: 'echo', args: ['hi'] },
  inputSchema: { type: 'object' },
  readOnly: true,
  writes: false,
});

/** A server's registry in memory: revisions and hashes, and every write it was asked for. */
class FakeServer {
  entities = new Map<string, RemoteEntity>();
  writes: string[] = [];
  lists = 0;
  roles: Record<string, 'owner' | 'admin' | 'member' | 'viewer'> = { team: 'owner', docs: 'viewer', local: 'owner' };
  private n = 0;

  put(kind: RegistryKind, definition: Record<string, unknown>): RemoteEntity {
    const name = String(definition['name']);
    const prior = this.entities.get(`${kind}:${name}`);
    const e: RemoteEntity = {
      kind,
      name,
      namespace: name.slice(0, name.indexOf('/')),
      revision: (prior?.revision ?? 0) + 1,
      contentHash: `h${++this.n}`,
      definition,
    };
    this.entities.set(`${kind}:${name}`, e);
    return e;
  }

  remote(): SyncRemote {
    return {
      whoami: () =>
        Promise.resolve({
          user: 'alice',
          namespaces: Object.entries(this.roles).map(([name, role]) => ({ name, role })),
        }),
      list: (kind, namespaces) => {
        this.lists++;
        return Promise.resolve(
          [...this.entities.values()].filter((e) => e.kind === kind && namespaces.includes(e.namespace)),
        );
      },
      add: (kind, definition) => {
        this.writes.push(`add ${kind} ${String(definition['name'])}`);
        const e = this.put(kind, definition);
        return Promise.resolve({ ok: true, revision: e.revision, contentHash: e.contentHash });
      },
      update: (kind, name, definition, expected) => {
        this.writes.push(`update ${kind} ${name}`);
        const cur = this.entities.get(`${kind}:${name}`);
        if (cur && expected !== undefined && expected !== cur.revision)
          return Promise.resolve({ conflict: true, serverRevision: cur.revision });
        const e = this.put(kind, definition);
        return Promise.resolve({ ok: true, revision: e.revision, contentHash: e.contentHash });
      },
      close: () => Promise.resolve(),
    };
  }
}

let dir = '';
let app: App;
let server: FakeServer;
let conn: RemoteConnection | undefined;
let bases: SyncBase[];
let sync: SyncService;
let now = new Date('2026-12-01T00:00:00.000Z');

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'sync-unit-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

beforeEach(async () => {
  if (app) await app.close();
  app = await buildApp({ dataDir: dir, inMemory: true, card: { endpoint: 'memory://', auth: 'none' } });
  server = new FakeServer();
  conn = undefined;
  bases = [];
  now = new Date('2026-12-01T00:00:00.000Z');
  sync = new SyncService({
    registry: app.facade.registry,
    namespaces: app.facade.namespaces,
    namespaceRepo: new SqliteNamespaceRepository(sqliteOf(app)),
    inspector: new FsResourceInspector(),
    logger: silentLogger,
    now: () => now,
    remotes: () => server.remote(),
    connection: {
      get: () => Promise.resolve(conn && structuredClone(conn)),
      set: (c) => {
        conn = structuredClone(c);
        return Promise.resolve();
      },
      clear: () => {
        const had = conn !== undefined;
        conn = undefined;
        return Promise.resolve(had);
      },
    },
    state: {
      list: () => Promise.resolve([...bases]),
      put: (_remote, b) => {
        bases = [...bases.filter((x) => !(x.kind === b.kind && x.name === b.name)), b];
        return Promise.resolve();
      },
      clear: () => Promise.resolve(0),
    },
  });
  await sync.connect({ url: URL, token: 'k', autoPullSeconds: 0 }, LOCAL_PRINCIPAL);
});
after(async () => {
  await app.close();
});

const local = async (): Promise<typeof LOCAL_PRINCIPAL> => app.facade.namespaces.localPrincipal();
const stateOf = async (name: string): Promise<string | undefined> =>
  (await sync.status({}, await local())).entities.find((e) => e.name === name)?.state;

describe('syncStateOf', () => {
  const base = { revision: 2, contentHash: 's2', localHash: 'l2' };
  it('compares the local hash with the base hash and the server revision with the base revision', () => {
    assert.equal(syncStateOf({ contentHash: 'l2' }, { revision: 2, contentHash: 's2' }, base), 'in-sync');
    assert.equal(syncStateOf({ contentHash: 'l3' }, { revision: 2, contentHash: 's2' }, base), 'ahead');
    assert.equal(syncStateOf({ contentHash: 'l2' }, { revision: 3, contentHash: 's3' }, base), 'behind');
    assert.equal(syncStateOf({ contentHash: 'l3' }, { revision: 3, contentHash: 's3' }, base), 'conflict');
    assert.equal(syncStateOf(undefined, { revision: 1, contentHash: 's' }, undefined), 'server-only');
    assert.equal(syncStateOf({ contentHash: 'l' }, undefined, undefined), 'local-only');
  });
  it('without a base, equal definitions are in sync and different ones a conflict', () => {
    assert.equal(syncStateOf({ contentHash: 'x' }, { revision: 4, contentHash: 'x' }, undefined), 'in-sync');
    assert.equal(syncStateOf({ contentHash: 'x' }, { revision: 4, contentHash: 'y' }, undefined), 'conflict');
    assert.equal(syncStateOf({ contentHash: 'x' }, { revision: 4, contentHash: 'y' }, undefined, true), 'in-sync');
  });
});

describe('SyncService', () => {
  it('refuses on a server (a principal that is not the local user), whatever the method', async () => {
    const caller = makePrincipal({ id: 'alice', roles: { team: 'owner' } });
    for (const call of [
      () => sync.connect({ url: URL, token: 'k' }, caller),
      () => sync.status({}, caller),
      () => sync.pull({}, caller),
      () => sync.push({}, caller),
      () => sync.disconnect(caller),
    ])
      await assert.rejects(
        call,
        (e: AppError) => e.reason === 'UNSUPPORTED_OPERATION' && /local setup/.test(e.message),
      );
  });

  it('connect creates the shared namespaces locally (not local/ or builtin/), owned by the local user', async () => {
    const mine = (await local()).roles;
    assert.equal(mine['team'], 'owner');
    assert.equal(mine['docs'], 'owner');
    assert.deepEqual(Object.keys(mine).sort(), ['docs', 'local', 'team']);
  });

  it('status skips local/ even when the server lists it', async () => {
    server.put('tool', tool('local/x', 'server'));
    await app.facade.registry.add('tool', { definition: tool('local/y', 'here') }, LOCAL_PRINCIPAL);
    const s = await sync.status({}, await local());
    assert.deepEqual(s.entities, []);
    assert.deepEqual(
      s.namespaces.map((n) => n.name),
      ['team', 'docs'],
    );
  });

  it('a pull that meets a conflict refuses, naming both revisions, and writes nothing at all', async () => {
    server.put('tool', tool('team/a', 'v1'));
    await sync.pull({}, await local());
    server.put('tool', tool('team/a', 'server v2'));
    server.put('tool', tool('team/b', 'new on server'));
    await app.facade.registry.update(
      'tool',
      'team/a',
      { definition: tool('team/a', 'local edit') },
      undefined,
      await local(),
    );
    const before = structuredClone({ bases, conn });
    await assert.rejects(
      () => sync.pull({}, LOCAL_PRINCIPAL),
      (e: AppError) =>
        e.reason === 'REVISION_CONFLICT' &&
        /team\/a \(local revision 2, server revision 2, last synced at server revision 1\)/.test(e.message),
    );
    assert.equal(
      await app.facade.registry.lookup('tool', 'team/b'),
      undefined,
      'the non-conflicting one is not written either',
    );
    assert.equal(
      ((await app.facade.registry.lookup('tool', 'team/a'))?.definition as { description: string }).description,
      'local edit',
    );
    assert.deepEqual({ bases, conn }, before);
  });

  it('a push that meets a conflict writes nothing to the server (all or nothing); force overwrites and reports', async () => {
    server.put('tool', tool('team/a', 'v1'));
    server.put('tool', tool('team/c', 'v1'));
    await sync.pull({}, await local());
    await app.facade.registry.update(
      'tool',
      'team/a',
      { definition: tool('team/a', 'mine') },
      undefined,
      await local(),
    );
    await app.facade.registry.update(
      'tool',
      'team/c',
      { definition: tool('team/c', 'mine') },
      undefined,
      await local(),
    );
    server.put('tool', tool('team/c', 'theirs'));
    assert.equal(await stateOf('team/a'), 'ahead');
    assert.equal(await stateOf('team/c'), 'conflict');
    await assert.rejects(
      () => sync.push({}, LOCAL_PRINCIPAL),
      (e: AppError) => e.reason === 'REVISION_CONFLICT',
    );
    assert.deepEqual(server.writes, []);
    const forced = await sync.push({ force: true }, LOCAL_PRINCIPAL);
    assert.deepEqual(forced.overwritten, [{ kind: 'tool', name: 'team/c', localRevision: 2, serverRevision: 2 }]);
    assert.deepEqual(server.writes.sort(), ['update tool team/a', 'update tool team/c']);
    assert.equal(await stateOf('team/a'), 'in-sync');
    assert.equal(await stateOf('team/c'), 'in-sync');
  });

  it('a push where the server role is viewer is refused and reported, other writes go on', async () => {
    await app.facade.registry.add('tool', { definition: tool('docs/v', 'mine') }, await local());
    await app.facade.registry.add('tool', { definition: tool('team/w', 'mine') }, await local());
    const r = await sync.push({}, LOCAL_PRINCIPAL);
    assert.deepEqual(
      r.skipped.map((s) => [s.name, /viewer/.test(s.reason)]),
      [['docs/v', true]],
    );
    assert.deepEqual(server.writes, ['add tool team/w']);
  });

  it('push and pull refuse to name local/ (it never leaves the machine)', async () => {
    for (const op of [
      () => sync.push({ namespaces: ['local'] }, LOCAL_PRINCIPAL),
      () => sync.pull({ namespaces: ['local'] }, LOCAL_PRINCIPAL),
    ])
      await assert.rejects(
        op,
        (e: AppError) => e.reason === 'INVALID_PARAMS' && /local\/ never leaves/.test(e.message),
      );
  });

  it('a dry run reports and writes nothing', async () => {
    server.put('tool', tool('team/d', 'v1'));
    const r = await sync.pull({ dryRun: true }, LOCAL_PRINCIPAL);
    assert.deepEqual(r.written, [{ kind: 'tool', name: 'team/d', action: 'added', revision: 1 }]);
    assert.equal(await app.facade.registry.lookup('tool', 'team/d'), undefined);
    assert.deepEqual(bases, []);
  });

  it('a resource whose path does not exist here is skipped with how to map it; a mapped one is written and remembered', async () => {
    server.put('resource', { name: 'team/r', type: 'fs-directory', path: '/nonexistent/on/this/machine' });
    const first = await sync.pull({}, LOCAL_PRINCIPAL);
    assert.equal(first.skipped[0]?.name, 'team/r');
    assert.match(first.skipped[0]?.hint ?? '', /--map team\/r=/);
    assert.equal(await app.facade.registry.lookup('resource', 'team/r'), undefined);
    const mapped = await sync.pull({ map: { 'team/r': dir } }, LOCAL_PRINCIPAL);
    assert.deepEqual(
      mapped.written.map((w) => w.name),
      ['team/r'],
    );
    assert.equal(((await app.facade.registry.lookup('resource', 'team/r'))?.definition as { path: string }).path, dir);
    assert.deepEqual(conn?.paths, { 'team/r': dir });
    assert.equal(await stateOf('team/r'), 'in-sync', 'the mapped path is not a local change');
    // A server change is pulled with the remembered path.
    server.put('resource', {
      name: 'team/r',
      type: 'fs-directory',
      path: '/nonexistent/on/this/machine',
      description: 'x',
    });
    await sync.pull({}, LOCAL_PRINCIPAL);
    assert.equal(((await app.facade.registry.lookup('resource', 'team/r'))?.definition as { path: string }).path, dir);
  });

  it('auto-pull pulls at start when the last pull is older than the interval, not when it is recent', async () => {
    server.put('tool', tool('team/auto', 'v1'));
    conn = { ...conn!, autoPullSeconds: 60, lastPullAt: new Date(now.getTime() - 10_000).toISOString() };
    const fresh = sync.startAutoPull();
    await fresh.first;
    fresh.stop();
    assert.equal(await app.facade.registry.lookup('tool', 'team/auto'), undefined, 'pulled 10 s ago: not yet');
    conn = { ...conn, lastPullAt: new Date(now.getTime() - 120_000).toISOString() };
    const stale = sync.startAutoPull();
    await stale.first;
    stale.stop();
    assert.ok(await app.facade.registry.lookup('tool', 'team/auto'));
    assert.equal(conn.lastPullAt, now.toISOString());
  });

  it('auto-pull is off at 0 seconds and never throws when the server fails', async () => {
    conn = { ...conn!, autoPullSeconds: 0 };
    const off = sync.startAutoPull();
    await off.first;
    off.stop();
    assert.equal(server.lists, 0);
    conn = { ...conn, autoPullSeconds: 60 };
    server.remote = () => {
      throw new AppError('UNAVAILABLE', 'down');
    };
    const failing = sync.startAutoPull();
    await failing.first;
    failing.stop();
  });
});

describe('SyncService pulls one at a time', () => {
  it('two pulls at once (an auto-pull and a request) write each entity once, neither fails', async () => {
    server.put('tool', tool('team/p1', 'v1'));
    server.put('tool', tool('team/p2', 'v1'));
    const [a, b] = await Promise.all([sync.pull({}, LOCAL_PRINCIPAL), sync.pull({}, LOCAL_PRINCIPAL)]);
    assert.deepEqual([...a.failed, ...b.failed], []);
    assert.equal(a.written.length + b.written.length, 2);
  });
});

/**
 * End to end: sync between two data directories (two machines) and one server, through the built
 * `agents` CLI. Each machine's commands spawn their own local agent over stdio; that agent talks to
 * the server over HTTP. The server is built in-process (the same app `agents serve` builds) with an
 * authenticator that maps the test key to a user who owns `team` and views `docs` there.
 */
import { sqliteOf } from '../support/sqlite-of.ts';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makePrincipal } from '../../src/application/index.ts';
import { AppError } from '../../src/domain/errors.ts';
import { SqliteNamespaceRepository } from '../../src/infrastructure/index.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { A2aHttpServer } from '../../src/protocol/server/http.server.ts';
import { agentsCli, type Agents } from '../support/cli.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-sync-e2e');
const KEY = 'sync-e2e-key-0123456789abcdef';
const A = join(ROOT, 'machine-a');
const B = join(ROOT, 'machine-b');
const SERVER_DATA = join(ROOT, 'server');
const SERVER_REPO = join(ROOT, 'server-checkout');
const B_REPO = join(ROOT, 'b-checkout');
/** The CLI on one machine: its own data directory, no config file, run from ROOT. */
const machine = (dataDir: string): Agents =>
  agentsCli({ dataDir, configHome: join(ROOT, 'no-config'), cwd: ROOT, timeoutMs: 60_000 });
const cliA = machine(A);
const cliB = machine(B);
let url = '';
let app: App | undefined;
let http: A2aHttpServer | undefined;

const toolYaml = (name: string, description: string): string =>
  `name: ${name}\ndescription: ${description}\nsource: command\ncommand:\n  program: echo\n  args: ["hi"]\ninputSchema:\n  type: object\nreadOnly: true\nwrites: false\n`;

function writeDef(name: string, text: string): string {
  const file = join(ROOT, 'defs', name);
  mkdirSync(join(ROOT, 'defs'), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const stateOf = (status: any, name: string): string | undefined =>
  status.entities.find((e: any) => e.name === name)?.state;

before(async () => {
  mkdirSync(SERVER_REPO, { recursive: true });
  mkdirSync(B_REPO, { recursive: true });
  app = await buildApp({ dataDir: SERVER_DATA, card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' } });
  const namespaces = new SqliteNamespaceRepository(sqliteOf(app));
  const at = new Date().toISOString();
  await namespaces.create('team', 'alice', at);
  await namespaces.create('docs', 'bob', at);
  await namespaces.setMember('docs', 'alice', 'viewer', at);
  // The server's administrator lets these namespaces' definitions run commands and name the test's directories.
  const admin = makePrincipal({ id: 'admin', roles: {}, admin: true });
  for (const ns of ['team', 'docs'])
    for (const cap of ['runs-program', 'host-path', 'private-network'] as const)
      await app.facade.capabilities.grant(ns, cap, undefined, admin);
  const alice = makePrincipal({ id: 'alice', roles: { team: 'owner', docs: 'viewer' } });
  http = new A2aHttpServer({
    dispatcher: app.dispatcher,
    card: app.card,
    logger: app.logger,
    authThrottle: null,
    auth: {
      authenticate: ({ authorization }) =>
        authorization === `Bearer ${KEY}`
          ? Promise.resolve(alice)
          : Promise.reject(new AppError('UNAUTHENTICATED', 'Authentication failed: the bearer token is not valid')),
    },
  });
  const addr = await http.listen(0, '127.0.0.1');
  url = `http://127.0.0.1:${addr.port}`;
  app.card.setEndpoint(`${url}/a2a`);
  // bob's namespace holds a tool alice may read but not write.
  const bob = makePrincipal({ id: 'bob', roles: { docs: 'owner' } });
  await app.facade.registry.add(
    'tool',
    { source: { text: toolYaml('docs/lint', 'bob lints'), filename: 'lint.yaml' } },
    bob,
  );
});

after(async () => {
  await http?.close(100);
  await app?.close();
});

describe('agents sync between two machines and a server', { concurrency: false }, () => {
  it('refuses sync before connecting, and a bad token on connect (nothing stored)', async () => {
    const before = (await cliA.json(['sync', 'status'], { code: 5 })).data;
    assert.match(before.error.message, /not connected/);
    const bad = (await cliA.json(['server', 'connect', url, '--token', 'wrong-token-0123456789'], { code: 4 })).data;
    assert.match(bad.error.message, /answered/);
    const st = await cliA.ok(['server', 'status']);
    assert.equal(st.connected, false);
  });

  it('connects both machines (token from the flag and from CLEVERAGENTS_SERVER_TOKEN); remote.json is private', async () => {
    const a = await cliA.ok(['server', 'connect', url, '--token', KEY, '--auto-pull-seconds', '0']);
    assert.deepEqual(
      a.namespaces.map((n: any) => n.name),
      ['docs', 'team'].filter((n) => a.namespaces.some((x: any) => x.name === n)),
    );
    assert.ok(a.namespaces.some((n: any) => n.name === 'team' && n.role === 'owner'));
    await cliB.ok(['server', 'connect', url, '--auto-pull-seconds', '0'], { env: { CLEVERAGENTS_SERVER_TOKEN: KEY } });
    assert.equal(statSync(join(A, 'remote.json')).mode & 0o777, 0o600);
    const st = await cliB.ok(['server', 'status']);
    assert.equal(st.connected, true);
    assert.equal(st.url, url);
    assert.equal(st.token, undefined, 'the token is never shown');
  });

  it('connect takes the key `agents login` stored for the server when no token is given', async () => {
    const C = join(ROOT, 'machine-c');
    const cliC = machine(C);
    const configHome = join(ROOT, 'config-c');
    mkdirSync(join(configHome, 'cleveragents'), { recursive: true });
    writeFileSync(
      join(configHome, 'cleveragents', 'credentials.json'),
      JSON.stringify({ servers: { [url]: { kind: 'key', token: KEY, user: 'alice' } } }),
    );
    const r = await cliC.ok(['server', 'connect', `${url}/`, '--auto-pull-seconds', '0'], {
      env: {
        XDG_CONFIG_HOME: configHome,
      },
    });
    assert.equal(r.user, 'alice');
    const none = (
      await cliC.json(['server', 'connect', url], { code: 2, env: { XDG_CONFIG_HOME: join(ROOT, 'config-none') } })
    ).data;
    assert.match(none.error.message, /a token is required/);
  });

  it('pushes a new entity from A, pulls it on B; local/ never leaves the machine', async () => {
    await cliA.ok(['tool', 'add', '--config', writeDef('t1.yaml', toolYaml('team/fmt', 'v1'))]);
    await cliA.ok(['tool', 'add', '--config', writeDef('l1.yaml', toolYaml('local/mine', 'private'))]);
    const s0 = await cliA.ok(['sync', 'status']);
    assert.equal(stateOf(s0, 'team/fmt'), 'local-only');
    assert.equal(stateOf(s0, 'docs/lint'), 'server-only');
    assert.equal(stateOf(s0, 'local/mine'), undefined, 'local/ is not part of sync');
    const pushed = await cliA.ok(['sync', 'push']);
    assert.deepEqual(
      pushed.written.map((w: any) => w.name),
      ['team/fmt'],
    );
    const refusedLocal = (await cliA.json(['sync', 'push', '--namespace', 'local'], { code: 7 })).data;
    assert.match(refusedLocal.error.message, /local\/ never leaves this machine/);
    const onServer = await app!.facade.registry.lookup('tool', 'local/mine');
    assert.equal(onServer, undefined);

    const sb = await cliB.ok(['sync', 'status']);
    assert.equal(stateOf(sb, 'team/fmt'), 'server-only');
    const pulled = await cliB.ok(['sync', 'pull']);
    assert.ok(pulled.written.some((w: any) => w.name === 'team/fmt' && w.action === 'added'));
    const shown = await cliB.ok(['tool', 'show', 'team/fmt']);
    assert.equal(shown.definition.description, 'v1');
    const sb2 = await cliB.ok(['sync', 'status']);
    assert.equal(stateOf(sb2, 'team/fmt'), 'in-sync');
  });

  it('an actor naming a secret (apiKeySecret) is pushed; the secret never is: it must be set on the server', async () => {
    const value = 'sk-sync-never-pushed-4711';
    const set = await cliA.run(['secret', 'set', 'team-key', '--namespace', 'team'], { input: `${value}\n` });
    assert.equal(set.code, 0, set.stderr);
    const actor = `name: team/keyed\nprovider: openai-compatible\nmodel: m\nbaseUrl: http://127.0.0.1:9/v1\napiKeySecret: team-key\n`;
    await cliA.ok(['actor', 'add', '--config', writeDef('keyed.yaml', actor)]);
    const pushed = await cliA.ok(['sync', 'push', '--namespace', 'team']);
    assert.ok(
      pushed.written.some((w: any) => w.name === 'team/keyed'),
      JSON.stringify(pushed),
    );
    const alice = makePrincipal({ id: 'alice', roles: { team: 'owner', docs: 'viewer' } });
    // On the server the actor is there, its secret is not: it says so, and how to set it.
    assert.deepEqual((await app!.facade.secrets.list('team', alice)).secrets, []);
    const missing = await app!.facade.registry.show('actor', 'team/keyed', alice);
    assert.deepEqual((missing.derived as { key?: unknown }).key, {
      present: false,
      source: 'secret team-key',
      problem: 'namespace team has no secret team-key (set it: agents secret set team-key --namespace team)',
    });
    await app!.facade.secrets.set({ namespace: 'team', name: 'team-key', value: 'sk-server-side' }, alice);
    const keyed = await app!.facade.registry.show('actor', 'team/keyed', alice);
    assert.deepEqual((keyed.derived as { key?: unknown }).key, { present: true, source: 'secret team-key' });
    // Nor does a pull bring a secret: B has the actor, and no secret.
    await cliB.ok(['sync', 'pull', '--namespace', 'team']);
    assert.equal((await cliB.ok(['actor', 'show', 'team/keyed'])).derived.key.present, false);
    assert.deepEqual((await cliB.ok(['secret', 'list', '--namespace', 'team'])).secrets, []);
  });

  it('ahead and behind: an edit on B is pushed, A sees it behind and pulls it', async () => {
    await cliB.ok(['tool', 'update', 'team/fmt', '--config', writeDef('t2.yaml', toolYaml('team/fmt', 'v2 from B'))]);
    assert.equal(stateOf(await cliB.ok(['sync', 'status']), 'team/fmt'), 'ahead');
    const dry = await cliB.ok(['sync', 'push', '--dry-run']);
    assert.equal(dry.dryRun, true);
    assert.equal((await app!.facade.registry.lookup('tool', 'team/fmt'))?.revision, 1, 'a dry run writes nothing');
    await cliB.ok(['sync', 'push']);
    assert.equal((await app!.facade.registry.lookup('tool', 'team/fmt'))?.revision, 2);
    assert.equal(stateOf(await cliA.ok(['sync', 'status']), 'team/fmt'), 'behind');
    await cliA.ok(['sync', 'pull']);
    assert.equal((await cliA.ok(['tool', 'show', 'team/fmt'])).definition.description, 'v2 from B');
    assert.equal(stateOf(await cliA.ok(['sync', 'status']), 'team/fmt'), 'in-sync');
  });

  it('a conflict is refused naming both revisions and changes nothing; --force reports what it overwrote', async () => {
    await cliA.ok(['tool', 'update', 'team/fmt', '--config', writeDef('t3.yaml', toolYaml('team/fmt', 'A edit'))]);
    await cliB.ok(['tool', 'update', 'team/fmt', '--config', writeDef('t4.yaml', toolYaml('team/fmt', 'B edit'))]);
    await cliB.ok(['sync', 'push']);
    const st = await cliA.ok(['sync', 'status']);
    assert.equal(stateOf(st, 'team/fmt'), 'conflict');
    const refused = (await cliA.json(['sync', 'pull'], { code: 5 })).data;
    assert.match(refused.error.message, /tool team\/fmt \(local revision \d+, server revision 3/);
    assert.equal((await cliA.ok(['tool', 'show', 'team/fmt'])).definition.description, 'A edit', 'nothing changed');
    const refusedPush = (await cliA.json(['sync', 'push'], { code: 5 })).data;
    assert.match(refusedPush.error.message, /changed on both sides/);
    assert.equal((await app!.facade.registry.lookup('tool', 'team/fmt'))?.revision, 3, 'the server is unchanged');

    const forced = await cliA.ok(['sync', 'push', '--force']);
    assert.deepEqual(
      forced.overwritten.map((o: any) => [o.name, o.serverRevision]),
      [['team/fmt', 3]],
    );
    assert.equal(((await app!.facade.registry.lookup('tool', 'team/fmt'))?.definition as any).description, 'A edit');
    // B changed nothing since its push: the server's new revision is simply behind there.
    assert.equal(stateOf(await cliB.ok(['sync', 'status']), 'team/fmt'), 'behind');
    await cliB.ok(['tool', 'update', 'team/fmt', '--config', writeDef('t5.yaml', toolYaml('team/fmt', 'B again'))]);
    const forcedPull = await cliB.ok(['sync', 'pull', '--force']);
    assert.ok(forcedPull.overwritten.some((o: any) => o.name === 'team/fmt'));
    assert.equal((await cliB.ok(['tool', 'show', 'team/fmt'])).definition.description, 'A edit');
  });

  it('a viewer namespace is pulled but never pushed (refused and reported)', async () => {
    await cliA.ok(['sync', 'pull']);
    await cliA.ok(['tool', 'update', 'docs/lint', '--config', writeDef('d1.yaml', toolYaml('docs/lint', 'alice'))]);
    const pushed = await cliA.ok(['sync', 'push']);
    assert.ok(pushed.skipped.some((s: any) => s.name === 'docs/lint' && /viewer/.test(s.reason)));
    assert.equal(
      ((await app!.facade.registry.lookup('tool', 'docs/lint'))?.definition as any).description,
      'bob lints',
    );
  });

  it('a resource whose path does not exist here is skipped, then mapped; the local path is never pushed', async () => {
    await app!.facade.registry.add(
      'resource',
      {
        definition: { name: 'team/site', description: 'the site', type: 'fs-directory', path: SERVER_REPO },
      },
      makePrincipal({ id: 'alice', roles: { team: 'owner' } }),
    );
    rmSync(SERVER_REPO, { recursive: true, force: true }); // not on machine B's disk (nor A's)
    const first = await cliB.ok(['sync', 'pull']);
    const skipped = first.skipped.find((s: any) => s.name === 'team/site');
    assert.ok(skipped, JSON.stringify(first));
    assert.match(skipped.hint, /--map team\/site=/);
    const none = await cliB.ok(['resource', 'list']);
    assert.ok(!none.items.some((r: any) => r.name === 'team/site'));

    const mapped = await cliB.ok(['sync', 'pull', '--map', `team/site=${B_REPO}`]);
    assert.ok(mapped.written.some((w: any) => w.name === 'team/site'));
    assert.equal((await cliB.ok(['resource', 'show', 'team/site'])).definition.path, B_REPO);
    assert.equal(
      stateOf(await cliB.ok(['sync', 'status']), 'team/site'),
      'in-sync',
      'the mapped path is no local change',
    );
    assert.equal((await cliB.ok(['server', 'status'])).paths['team/site'], B_REPO, 'the map is remembered');

    // A real local edit is pushed with the server's path kept.
    mkdirSync(SERVER_REPO, { recursive: true });
    const def = readFileSync(
      writeDef('r.yaml', `name: team/site\ndescription: edited on B\ntype: fs-directory\npath: ${B_REPO}\n`),
      'utf8',
    );
    assert.ok(def);
    await cliB.ok(['resource', 'update', 'team/site', '--config', join(ROOT, 'defs', 'r.yaml')]);
    await cliB.ok(['sync', 'push']);
    const server = (await app!.facade.registry.lookup('resource', 'team/site'))?.definition as any;
    assert.equal(server.description, 'edited on B');
    assert.equal(server.path, SERVER_REPO);
  });

  it('disconnect forgets the server; sync then refuses', async () => {
    const r = await cliB.ok(['server', 'disconnect']);
    assert.equal(r.disconnected, true);
    assert.equal((await cliB.ok(['server', 'status'])).connected, false);
    await cliB.json(['sync', 'pull'], { code: 5 });
  });
});

/**
 * Secrets through the CLI against a real `agents serve` (issue #35): member alice sets a secret in
 * her namespace from stdin, lists it (no value anywhere, json too), and her actor with
 * `apiKeySecret` chats with a fake provider that sees the value as its bearer key. bob can neither
 * list, change nor use it: his actor naming the same secret finds none in his namespace, and he
 * cannot name another namespace's secret at all. The value is in no output, no audit record, no
 * line of the server's log and no byte of its database; the key file is 0600; a namespace deleted
 * takes its secrets with it. Locally (no server) the same commands work in the local agent.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, cliPerson } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { findKey } from '../support/team-server.ts';

const ADMIN = 'secrets-cli-admin-token-0123456789abcdef';
/** The secret's value: looked for everywhere it must not be. */
const VALUE = 'sk-alice-e2e-7d41c09b5a3e';

interface Envelope {
  exitCode: number;
  data: any;
}

describe('secrets through the CLI on a server: set, list, use; another member can do none of it', () => {
  const root = mkdtempSync(join(tmpdir(), 'agents-secrets-cli-'));
  const serverData = join(root, 'server');
  let server: HttpServerProcess;
  let fake: FakeLlm;
  const outputs: string[] = [];

  /** The CLI as one person: their own config directory (their stored login). */
  const as = (who: string) => cliPerson(root, who, { onOutput: (out, err) => outputs.push(out, err) });
  const admin = as('admin');
  const alice = as('alice');
  const bob = as('bob');
  const actorFile = (name: string, secret: string): string => {
    const p = join(root, `${name.replace('/', '-')}.yaml`);
    writeFileSync(
      p,
      `name: ${name}\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeySecret: ${secret}\n`,
    );
    return p;
  };

  before(async () => {
    fake = await startFakeOpenAI({ expectKey: VALUE });
    server = await startHttpServer({
      dataDir: serverData,
      token: ADMIN,
      // --verbose: the server logs at debug level, so the log below is as full as it gets.
      args: ['--verbose'],
      env: {
        ...process.env,
        CLEVERAGENTS_CONFINEMENT: 'none',
        CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '0',
        // The fake provider is on 127.0.0.1: a server's egress guard lets it through only when allowed.
        CLEVERAGENTS_ALLOW_EGRESS: '127.0.0.1',
      },
    });
    await admin.ok(['login', '--server', server.baseUrl], `${ADMIN}\n`);
    const aliceKey = findKey(await admin.ok(['user', 'add', 'alice'])) ?? '';
    const bobKey = findKey(await admin.ok(['user', 'add', 'bob'])) ?? '';
    assert.ok(aliceKey && bobKey);
    await alice.ok(['login', '--server', server.baseUrl], `${aliceKey}\n`);
    await bob.ok(['login', '--server', server.baseUrl], `${bobKey}\n`);
  });
  after(async () => {
    await server?.stop();
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('alice sets a secret from stdin and lists it: its name, never its value', async () => {
    const set = await alice.ok(['secret', 'set', 'alice-key'], `${VALUE}\n`);
    assert.deepEqual([set.namespace, set.name, set.created], ['alice', 'alice-key', true]);
    // Plain output (a pipe) and json: names and dates only.
    const plain = await alice.run(['secret', 'list']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^alice-key\talice\t/m);
    const listed = await alice.ok(['secret', 'list', '--namespace', 'alice']);
    assert.deepEqual(
      listed.secrets.map((s: { name: string; createdBy: string }) => [s.name, s.createdBy]),
      [['alice-key', 'alice']],
    );
    // A new value replaces the old one (the list is unchanged).
    const again = await alice.ok(['secret', 'set', 'alice-key', '--namespace', 'alice'], `${VALUE}\n`);
    assert.equal(again.created, false);
    // The key file was made beside the database, readable by the server's user only.
    assert.equal(statSync(join(serverData, 'secret.key')).mode & 0o777, 0o600);
  });

  it("alice's actor with apiKeySecret chats: the provider sees the value as its bearer key", async () => {
    await alice.ok(['actor', 'add', '--config', actorFile('alice/gpt', 'alice-key')]);
    const shown = await alice.ok(['actor', 'show', 'alice/gpt']);
    assert.deepEqual(shown.derived.key, { present: true, source: 'secret alice-key' });
    fake.push({ text: ['hello ', 'alice'] });
    const before = fake.generations.length;
    const sent = await alice.ok(['send', '--actor', 'alice/gpt', 'hi']);
    assert.equal(sent.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(sent));
    assert.equal(fake.generations.length, before + 1);
    assert.equal(fake.generations.at(-1)?.headers['authorization'], `Bearer ${VALUE}`);
  });

  it('bob cannot list, change or remove alice’s secrets: her namespace looks like none at all', async () => {
    const answers = [];
    for (const ns of ['alice', 'no-such-ns']) {
      const list = await bob.json(['secret', 'list', '--namespace', ns]);
      const set = await bob.json(['secret', 'set', 'alice-key', '--namespace', ns], 'sk-bob-overwrite\n');
      const remove = await bob.json(['secret', 'remove', 'alice-key', '--namespace', ns]);
      for (const e of [list, set, remove]) assert.equal(e.exitCode, 3, JSON.stringify(e.data));
      answers.push([list, set, remove].map((e) => e.data.error.message.replace(ns, '<ns>')));
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.deepEqual(answers[0], Array(3).fill('Namespace <ns> was not found'));
    // alice's secret is as it was.
    assert.deepEqual(
      (await alice.ok(['secret', 'list'])).secrets.map((s: { name: string }) => s.name),
      ['alice-key'],
    );
  });

  it('bob’s actor naming the same secret finds none in his namespace; he cannot name hers at all', async () => {
    await bob.ok(['actor', 'add', '--config', actorFile('bob/gpt', 'alice-key')]);
    const shown = await bob.ok(['actor', 'show', 'bob/gpt']);
    assert.deepEqual(shown.derived.key, {
      present: false,
      source: 'secret alice-key',
      problem: 'namespace bob has no secret alice-key (set it: agents secret set alice-key --namespace bob)',
    });
    const before = fake.generations.length;
    const sent = await bob.json(['send', '--actor', 'bob/gpt', 'hi']);
    assert.notEqual(sent.exitCode, 0);
    assert.match(JSON.stringify(sent.data), /No API key for bob\/gpt: namespace bob has no secret alice-key/);
    assert.equal(fake.generations.length, before, 'nothing was sent to the provider');
    // A secret name has no namespace part: another namespace's secret cannot be named.
    const foreign = await bob.json(['actor', 'add', '--config', actorFile('bob/thief', 'alice/alice-key')]);
    assert.equal(foreign.exitCode, 7, JSON.stringify(foreign.data));
    assert.match(JSON.stringify(foreign.data), /apiKeySecret/);
  });

  it('the audit log has each set with its name and namespace', async () => {
    const audit = await admin.ok(['audit', 'list', '--event', 'secret.set']);
    assert.deepEqual(
      audit.events.map((e: { principal: string; namespace: string; target: string }) => [
        e.principal,
        e.namespace,
        e.target,
      ]),
      [
        ['alice', 'alice', 'alice-key'],
        ['alice', 'alice', 'alice-key'],
      ],
    );
  });

  it('a namespace deleted takes its secrets with it', async () => {
    await admin.ok(['namespace', 'create', 'team']);
    await admin.ok(['namespace', 'add-member', 'team', 'alice', '--role', 'member']);
    await alice.ok(['secret', 'set', 'team-key', '--namespace', 'team'], 'sk-team-value\n');
    await admin.ok(['namespace', 'delete', 'team']);
    await admin.ok(['namespace', 'create', 'team']);
    assert.deepEqual((await admin.ok(['secret', 'list', '--namespace', 'team'])).secrets, []);
    const removed = await alice.ok(['secret', 'remove', 'alice-key']);
    assert.equal(removed.removed, true);
  });

  it('the value is in no output, no line of the server’s log, and no byte of its database', async () => {
    for (const out of outputs) assert.ok(!out.includes(VALUE), `an output shows the value:\n${out}`);
    assert.ok(server.stderr().length > 0, 'the server logged');
    assert.ok(!server.stderr().includes(VALUE), 'the server log shows the value');
    const files = readdirSync(serverData).filter((f) => f.startsWith('cleveragents.db'));
    assert.ok(files.length > 0);
    for (const f of files)
      assert.ok(!readFileSync(join(serverData, f)).includes(Buffer.from(VALUE)), `${f} holds the value in clear`);
  });
});

describe('secrets through the CLI in local mode', () => {
  const root = mkdtempSync(join(tmpdir(), 'agents-secrets-local-'));
  const data = join(root, 'data');
  const cli = agentsCli({ dataDir: data, configHome: join(root, 'config') });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('sets, lists and removes a secret of local/ in the local agent; an empty value is refused', async () => {
    const set = await cli.run(['secret', 'set', 'openai'], { input: 'sk-local-value\n' });
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /^namespace: local$/m);
    const list = await cli.run(['--format', 'json', 'secret', 'list']);
    assert.deepEqual(
      (JSON.parse(list.stdout) as Envelope).data.secrets.map((s: { name: string }) => s.name),
      ['openai'],
    );
    assert.ok(!list.stdout.includes('sk-local-value'));
    assert.equal(statSync(join(data, 'secret.key')).mode & 0o777, 0o600);
    const empty = await cli.run(['secret', 'set', 'openai'], { input: '\n' });
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /no value given/);
    const removed = await cli.run(['secret', 'remove', 'openai']);
    assert.equal(removed.code, 0, removed.stderr);
    const gone = await cli.run(['secret', 'remove', 'openai']);
    assert.equal(gone.code, 3);
    assert.match(gone.stderr, /There is no secret openai in namespace local/);
  });
});

describe('the server’s secret key file', () => {
  const root = mkdtempSync(join(tmpdir(), 'agents-secret-key-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('one that others may read stops the start with the file, its mode and the fix', async () => {
    const dataDir = join(root, 'open');
    mkdirSync(dataDir);
    const keyFile = join(dataDir, 'secret.key');
    writeFileSync(keyFile, `${Buffer.alloc(32, 1).toString('base64')}\n`, { mode: 0o644 });
    chmodSync(keyFile, 0o644);
    const r = await agentsCli({ dataDir, configHome: join(root, 'config') }).run([
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--token',
      ADMIN,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`the secret key file ${keyFile} may be read or written by group or others \\(mode 644\\)`),
    );
    assert.match(r.stderr, new RegExp(`run chmod 600 ${keyFile}`));
    assert.doesNotMatch(r.stderr, /listening on/);
  });

  it('CLEVERAGENTS_SECRET_KEY_FILE puts it elsewhere (made there on first use, 0600)', async () => {
    const dataDir = join(root, 'elsewhere');
    const keyFile = join(root, 'keys', 'cleveragents.key');
    mkdirSync(join(root, 'keys'));
    const server = await startHttpServer({
      dataDir,
      token: ADMIN,
      env: { ...process.env, CLEVERAGENTS_SECRET_KEY_FILE: keyFile, CLEVERAGENTS_CONFINEMENT: 'none' },
    });
    try {
      const client = agentsCli({ dataDir: join(root, 'cli-data'), configHome: join(root, 'config') });
      const done = await client.run(['--server', server.baseUrl, '--token', ADMIN, 'secret', 'set', 'k'], {
        input: 'value\n',
      });
      assert.equal(done.code, 0, done.stderr);
    } finally {
      await server.stop();
    }
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.ok(!readdirSync(dataDir).includes('secret.key'), 'no key beside the database');
  });
});

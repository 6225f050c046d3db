/**
 * An operator's maintenance of a server's database with the built CLI (issue #40):
 * `agents serve --config`, `agents server migrate [--check]` on an absent, old, current and newer
 * database (serve still refuses a newer one), a backup taken while a server writes and restored
 * into a fresh data directory whose server answers with the data, a restore refused while a
 * server uses the data directory, and PostgreSQL through pg_dump/pg_restore when it is there.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import pg from 'pg';
import { createMigrator } from '../../src/infrastructure/index.ts';
import { MIGRATION_NAMES } from '../../src/infrastructure/persistence/migrator.ts';
import { agentsCli, type Agents } from '../support/cli.ts';
import { startHttpServer, TOKEN } from '../support/harness.ts';
import { createPgDatabase, pgSkip } from '../support/postgres.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-maintenance-e2e-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));
let dirs = 0;
const dataDir = (name: string): string => join(ROOT, `${name}-${dirs++}`);
const cli = (dir: string): Agents => agentsCli({ dataDir: dir, configHome: join(ROOT, 'config') });
const LAST = MIGRATION_NAMES.at(-1) ?? '';

/** A SQLite database with every migration but the last, as an older CleverAgents left it. */
async function oldDatabase(dir: string): Promise<string> {
  const file = join(dir, 'cleveragents.db');
  spawnSync('mkdir', ['-p', dir]);
  const kysely = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(file) }) });
  const { error } = await createMigrator(kysely as never).migrateTo(MIGRATION_NAMES.at(-2) ?? '');
  await kysely.destroy();
  assert.equal(error, undefined);
  return file;
}

describe('agents server migrate', () => {
  it('--check on an absent database: exit 5 with every migration named, and nothing made', async () => {
    const dir = dataDir('absent');
    const r = await cli(dir).json(['server', 'migrate', '--check'], { code: 5 });
    assert.deepEqual(r.data.pending, MIGRATION_NAMES);
    assert.equal(existsSync(dir), false, 'never writes');
  });

  it('--check on an old database names the pending migration (exit 5); migrate applies it; --check is then 0', async () => {
    const dir = dataDir('old');
    const file = await oldDatabase(dir);
    const before = statSync(file).mtimeMs;
    const check = await cli(dir).run(['server', 'migrate', '--check'], { code: 5 });
    assert.match(check.stdout, new RegExp(`1 migration\\(s\\) pending:\\n  ${LAST}\\n`));
    assert.equal(statSync(file).mtimeMs, before, '--check never writes');
    const run = await cli(dir).run(['server', 'migrate'], { code: 0 });
    assert.match(run.stdout, new RegExp(`1 migration\\(s\\) applied:\\n  ${LAST}`));
    const again = await cli(dir).json(['server', 'migrate', '--check'], { code: 0 });
    assert.deepEqual(again.data.pending, []);
  });

  it('a database a newer version wrote: --check and migrate exit 8 and change nothing; serve refuses to start', async () => {
    const dir = dataDir('newer');
    await cli(dir).run(['server', 'migrate'], { code: 0 });
    const file = join(dir, 'cleveragents.db');
    const db = new BetterSqlite3(file);
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run(
      '0999_future',
      new Date().toISOString(),
    );
    db.close();
    const check = await cli(dir).run(['server', 'migrate', '--check'], { code: 8 });
    assert.match(check.stderr, /written by a newer version of CleverAgents \(migrations 0999_future\)/);
    await cli(dir).run(['server', 'migrate'], { code: 8 });
    const serve = await cli(dir).run(['serve', '--port', '0', '--token', TOKEN], { code: 2 });
    assert.match(serve.stderr, /cannot be upgraded: .*0999_future.*newer version/);
  });

  it('takes the data directory from the server config file', async () => {
    const dir = dataDir('from-config');
    await oldDatabase(dir);
    const config = join(ROOT, `migrate-${dirs++}.yaml`);
    writeFileSync(config, `dataDir: ${dir}\nport: 0\n`);
    // The CLI's own data directory is elsewhere: only the file names this one.
    const r = await cli(dataDir('elsewhere')).json(['server', 'migrate', '--check', '--config', config], {
      code: 5,
      env: { CLEVERAGENTS_DATA_DIR: '' },
    });
    assert.deepEqual(r.data.pending, [LAST]);
  });
});

describe('agents serve --config', () => {
  it('starts with the port, token and data directory from the file', async () => {
    const dir = dataDir('serve-config');
    const config = join(ROOT, `serve-${dirs++}.yaml`);
    writeFileSync(config, `# the team server\nport: 0\ndataDir: ${dir}\ntoken: ${TOKEN}\n`, { mode: 0o600 });
    const server = await startHttpServer({ dataDir: dir, token: null, args: ['--config', config] });
    try {
      const res = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
      assert.equal(res.status, 200);
      assert.ok(existsSync(join(dir, 'cleveragents.db')), 'the data directory is the one the file names');
    } finally {
      await server.stop();
    }
  });

  it('a file with a mistake: one error line naming file:line, exit 2, nothing opened', async () => {
    const dir = dataDir('bad-config');
    const config = join(ROOT, `bad-${dirs++}.yaml`);
    writeFileSync(config, `port: 0\ndataDir: ${dir}\nretention-days: 3\n`);
    const r = await cli(dir).run(['serve', '--config', config], { code: 2 });
    assert.match(
      r.stderr,
      new RegExp(`error: ${config}:3: unknown key "retention-days" \\(did you mean "retentionDays"\\?\\)`),
    );
    assert.equal(existsSync(dir), false);
  });
});

describe('agents server backup and restore (SQLite)', () => {
  it('backs up while a server writes; the backup restored into a fresh data directory serves the data', async () => {
    const dir = dataDir('live');
    const server = await startHttpServer({ dataDir: dir });
    const remote = agentsCli({
      dataDir: dataDir('client'),
      configHome: join(ROOT, 'config'),
      prefix: () => ['--server', server.baseUrl, '--token', TOKEN],
    });
    const backup = join(ROOT, 'live-backup.db');
    try {
      for (const title of ['first', 'second']) await remote.ok(['session', 'create', '--title', title]);
      // The server keeps writing while the backup is taken.
      const writing = (async () => {
        for (let i = 0; i < 4; i++) await remote.ok(['session', 'create', '--title', `during-${i}`]);
      })();
      const r = await cli(dir).run(['server', 'backup', backup], { code: 0 });
      await writing;
      assert.match(
        r.stderr,
        /the secret key \(.*secret\.key\) is not in the backup: stored secrets cannot be decrypted without it/,
      );
      assert.equal(statSync(backup).mode & 0o777, 0o600);
      // Refused while the server uses the data directory: nothing is replaced.
      const refused = await cli(dir).run(['server', 'restore', backup], { code: 5 });
      assert.match(refused.stderr, /a server uses .*cleveragents\.db \(pid \d+\)/);
    } finally {
      await server.stop();
    }
    const fresh = dataDir('restored');
    const restored = await cli(fresh).json(['server', 'restore', backup], { code: 0 });
    assert.deepEqual(restored.data.pending, []);
    const again = await startHttpServer({ dataDir: fresh });
    try {
      const reader = agentsCli({
        dataDir: dataDir('reader'),
        configHome: join(ROOT, 'config'),
        prefix: () => ['--server', again.baseUrl, '--token', TOKEN],
      });
      const titles = (
        (await reader.ok(['session', 'list', '--page-size', '100'])).sessions as Array<{ title?: string }>
      ).map((s) => s.title);
      assert.ok(titles.includes('first') && titles.includes('second'), `restored sessions: ${titles.join(', ')}`);
    } finally {
      await again.stop();
    }
  });

  it('refuses a file that is not a CleverAgents database, and keeps the replaced database', async () => {
    const dir = dataDir('not-ours');
    const junk = join(ROOT, 'junk.db');
    const db = new BetterSqlite3(junk);
    db.exec('create table t (x)');
    db.close();
    const r = await cli(dir).run(['server', 'restore', junk], { code: 2 });
    assert.match(r.stderr, /junk\.db is not a CleverAgents database/);
    await cli(dir).run(['server', 'migrate'], { code: 0 });
    const copy = join(ROOT, 'copy.db');
    await cli(dir).run(['server', 'backup', copy], { code: 0 });
    const r2 = await cli(dir).run(['server', 'restore', copy], { code: 0 });
    assert.match(r2.stderr, /the database it replaced is kept as .*cleveragents\.db\.pre-restore/);
  });
});

describe('agents server backup and restore --with-key', () => {
  it('copies the secret key beside the backup (0600) and puts it in place on restore, keeping the old one', async () => {
    const dir = dataDir('with-key');
    await cli(dir).run(['server', 'migrate'], { code: 0 });
    const key = `${randomBytes(32).toString('base64')}\n`;
    writeFileSync(join(dir, 'secret.key'), key, { mode: 0o600 });
    const backup = join(ROOT, 'with-key.db');
    const b = await cli(dir).run(['server', 'backup', backup, '--with-key'], { code: 0 });
    assert.match(b.stderr, /the secret key is in .*with-key\.db\.key/);
    assert.equal(readFileSync(`${backup}.key`, 'utf8'), key);
    assert.equal(statSync(`${backup}.key`).mode & 0o777, 0o600);
    const fresh = dataDir('with-key-restored');
    mkdirSync(fresh, { mode: 0o700 });
    const other = `${randomBytes(32).toString('base64')}\n`;
    writeFileSync(join(fresh, 'secret.key'), other, { mode: 0o600 });
    const r = await cli(fresh).run(['server', 'restore', backup, '--with-key'], { code: 0 });
    assert.match(r.stderr, /the secret key was restored to .*secret\.key/);
    assert.equal(readFileSync(join(fresh, 'secret.key'), 'utf8'), key);
    assert.equal(readFileSync(join(fresh, 'secret.key.pre-restore'), 'utf8'), other);
    // Without a key to copy, --with-key refuses before writing anything.
    const none = dataDir('no-key');
    await cli(none).run(['server', 'migrate'], { code: 0 });
    const refused = await cli(none).run(['server', 'backup', join(ROOT, 'no-key.db'), '--with-key'], { code: 3 });
    assert.match(refused.stderr, /there is no secret key at .*secret\.key/);
    assert.equal(existsSync(join(ROOT, 'no-key.db')), false);
  });
});

describe('agents server backup without the PostgreSQL client tools', () => {
  it('says which package holds pg_dump (exit 1), before it connects', async () => {
    const r = await cli(dataDir('no-pg-dump')).run(
      ['server', 'backup', join(ROOT, 'x.dump'), '--database-url', 'postgres://u:pw@127.0.0.1:1/none'],
      { code: 1, env: { PATH: dirname(process.execPath) } },
    );
    assert.match(r.stderr, /pg_dump is not installed \(it is in the postgresql-client package\)/);
    assert.doesNotMatch(r.stderr + r.stdout, /pw@/, 'the password is not shown');
  });
});

describe('agents server backup and restore (PostgreSQL)', { skip: pgSkip() }, () => {
  it(
    'pg_dump while it holds data, pg_restore --clean into another database with --yes',
    { skip: spawnSync('pg_dump', ['--version']).status === 0 ? false : 'pg_dump is not installed' },
    async () => {
      const source = await createPgDatabase('ca_bk');
      const target = await createPgDatabase('ca_rs');
      try {
        const dir = dataDir('pg');
        const check = await cli(dir).json(['server', 'migrate', '--check', '--database-url', source.url], { code: 5 });
        assert.deepEqual(check.data.pending, MIGRATION_NAMES);
        await cli(dir).run(['server', 'migrate', '--database-url', source.url], { code: 0 });
        await cli(dir).run(['server', 'migrate', '--check', '--database-url', source.url], { code: 0 });
        const dump = join(ROOT, 'pg.dump');
        await cli(dir).run(['server', 'backup', dump, '--database-url', source.url], { code: 0 });
        const unconfirmed = await cli(dir).run(['server', 'restore', dump, '--database-url', target.url], { code: 2 });
        assert.match(unconfirmed.stderr, /restoring drops what .* holds/);
        await cli(dir).run(['server', 'restore', dump, '--database-url', target.url, '--yes'], { code: 0 });
        const restored = await cli(dir).json(['server', 'migrate', '--check', '--database-url', target.url], {
          code: 0,
        });
        assert.equal(restored.data.applied, MIGRATION_NAMES.length);
        // A newer version's migration: --check says so (8), and serve refuses to start on it (2).
        const c = new pg.Client({ connectionString: target.url });
        await c.connect();
        await c.query("insert into kysely_migration (name, timestamp) values ('0999_future', now()::text)");
        await c.end();
        await cli(dir).run(['server', 'migrate', '--check', '--database-url', target.url], { code: 8 });
        const serve = await cli(dir).run(['serve', '--port', '0', '--token', TOKEN, '--database-url', target.url], {
          code: 2,
        });
        assert.match(serve.stderr, /cannot be upgraded: .*0999_future/);
      } finally {
        await source.drop();
        await target.drop();
      }
    },
  );
});

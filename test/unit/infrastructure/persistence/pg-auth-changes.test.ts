/**
 * Reusing a verified credential on PostgreSQL (issue #40, point 7): the account tables' triggers
 * notify every instance, so a grant is reused until something changes — and never while the
 * notifications cannot arrive. Two instances are two PgDatabases over one database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger, type AuthGrant } from '../../../../src/application/index.ts';
import { PgAccountRepository } from '../../../../src/infrastructure/persistence/postgres/pg-account.repository.ts';
import { openPgDatabase, type PgDatabase } from '../../../../src/infrastructure/persistence/postgres/pg-database.ts';
import { accountServices, type AccountServices } from '../../../support/account-services.ts';
import { eventually } from '../../../support/eventually.ts';
import { CountingHasher } from '../../../support/fakes/accounts.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../../../support/postgres.ts';

const TOKEN = 'ca_test_pg_auth_changes_token_0123456789';
const CHANNEL = 'ca_auth_changes';
const CLIENT = { client: '127.0.0.1' };

interface Instance {
  db: PgDatabase;
  accounts: PgAccountRepository;
  services: AccountServices;
}

describe('reusing an authentication on PostgreSQL', { skip: pgSkip() }, () => {
  let made: PgTestDatabase;
  const opened: Instance[] = [];
  const hasher = new CountingHasher();

  async function instance(): Promise<Instance> {
    const db = await openPgDatabase({ url: made.url, logger: silentLogger });
    const accounts = new PgAccountRepository(db);
    const audit = { record: async () => {} };
    const services = accountServices({
      accounts,
      hasher,
      namespaces: { get: async () => undefined, defaultFor: async () => [] },
      audit,
      logger: silentLogger,
    });
    const one = { db, accounts, services };
    opened.push(one);
    return one;
  }

  /** Asks for the version once (which starts the listener), then waits until it listens. */
  async function listening(i: Instance): Promise<void> {
    i.accounts.authVersion();
    await eventually(async () => i.db.isListening(CHANNEL) || undefined, 5000, 'the listener');
  }

  before(async () => {
    made = await createPgDatabase('ca_authv');
  });

  after(async () => {
    for (const i of opened) await i.db.close();
    await made?.drop();
  });

  it('reuses a grant until the key is revoked on another instance, then refuses it', async () => {
    const a = await instance();
    const b = await instance();
    await b.services.users.ensureServerToken(TOKEN);
    await listening(a);
    const grant = await a.services.authentication.grant({ bearer: TOKEN, ...CLIENT });
    assert.equal(a.services.authentication.reuse(grant)?.id, 'admin');
    assert.equal(a.services.authentication.reuse(grant)?.id, 'admin');
    const [key] = await b.accounts.listKeys('admin');
    assert.ok(key);
    await b.accounts.revokeKey(key.id, new Date().toISOString());
    await eventually(async () => (a.services.authentication.reuse(grant) === undefined ? true : undefined));
    await assert.rejects(
      a.services.authentication.grant({ bearer: TOKEN, ...CLIENT }),
      (err: { details?: { reason?: string } }) => err.details?.reason === 'revoked',
    );
  });

  it("counts this instance's own revocation at once, before its notification", async () => {
    const a = await instance();
    await a.services.users.ensureServerToken(`${TOKEN}_own`);
    await listening(a);
    const grant = await a.services.authentication.grant({ bearer: `${TOKEN}_own`, ...CLIENT });
    assert.ok(a.services.authentication.reuse(grant));
    const key = (await a.accounts.listKeys('admin')).find((k) => k.revokedAt === undefined);
    assert.ok(key);
    await a.accounts.revokeKey(key.id, new Date().toISOString());
    assert.equal(a.services.authentication.reuse(grant), undefined);
  });

  it('moves the version on every call while the listener is not connected: not yet, and when lost', async () => {
    const a = await instance();
    await a.services.users.ensureServerToken(`${TOKEN}_down`);
    // The first call starts the listener; the second comes before it can have connected.
    assert.notEqual(a.accounts.authVersion(), a.accounts.authVersion());
    const notYet = await a.services.authentication.grant({ bearer: `${TOKEN}_down`, ...CLIENT });
    await listening(a);
    assert.equal(a.services.authentication.reuse(notYet), undefined);
    assert.equal(a.accounts.authVersion(), a.accounts.authVersion());
    const before: AuthGrant = await a.services.authentication.grant({ bearer: `${TOKEN}_down`, ...CLIENT });
    assert.ok(a.services.authentication.reuse(before));
    // The listener connections of this database are cut (the server restarted, a network fault).
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name = 'cleveragents-listen'`.execute(a.db.kysely);
    await eventually(async () => (a.db.isListening(CHANNEL) ? undefined : true), 5000, 'the listener lost');
    assert.notEqual(a.accounts.authVersion(), a.accounts.authVersion());
    assert.equal(a.services.authentication.reuse(before), undefined);
    const down = await a.services.authentication.grant({ bearer: `${TOKEN}_down`, ...CLIENT });
    assert.equal(a.services.authentication.reuse(down), undefined);
    // Connected again: a new grant is reused again.
    await listening(a);
    const again = await a.services.authentication.grant({ bearer: `${TOKEN}_down`, ...CLIENT });
    assert.ok(a.services.authentication.reuse(again));
  });

  it("does not count a key's last-use stamp as a change", async () => {
    const a = await instance();
    const b = await instance();
    await b.services.users.ensureServerToken(`${TOKEN}_touch`);
    await listening(a);
    const before = a.accounts.authVersion();
    const key = (await b.accounts.listKeys('admin')).find((k) => k.revokedAt === undefined);
    assert.ok(key);
    let atMark: number | undefined;
    await a.db.listen('ca_test_mark', () => (atMark = a.accounts.authVersion()));
    await b.accounts.touchKey(key.id, new Date().toISOString());
    // One instance's notifications arrive in order: when the mark is seen, the stamp's would have been.
    await b.db.notify('ca_test_mark', '');
    const seen = await eventually(async () => atMark, 5000, 'the mark');
    assert.equal(seen, before);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LOCAL_PRINCIPAL,
  makePrincipal,
  QuotaService,
  type NamespaceLimitsRepository,
  type StoredLimits,
  type UsageCounter,
} from '../../../../src/application/index.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { NO_LIMITS, type UsageLimits } from '../../../../src/domain/quota.ts';

class FakeStore implements UsageCounter, NamespaceLimitsRepository {
  rows = new Map<string, StoredLimits>();
  running = new Map<string, number>();
  tokens = new Map<string, number>();
  sinceAsked: string[] = [];
  failList = false;
  lists = 0;
  runningTurns(user: string): Promise<number> {
    return Promise.resolve(this.running.get(user) ?? 0);
  }
  tokensSince(user: string, since: string): Promise<number> {
    this.sinceAsked.push(since);
    return Promise.resolve(this.tokens.get(user) ?? 0);
  }
  list(): Promise<StoredLimits[]> {
    this.lists++;
    if (this.failList) return Promise.reject(new AppError('UNAVAILABLE', 'database down'));
    return Promise.resolve([...this.rows.values()]);
  }
  get(ns: string): Promise<StoredLimits | undefined> {
    return Promise.resolve(this.rows.get(ns));
  }
  put(e: StoredLimits): Promise<void> {
    this.rows.set(e.namespace, e);
    return Promise.resolve();
  }
}

const alice = makePrincipal({ id: 'alice', roles: { alice: 'owner', team: 'member' } });
const inTeam = { ...alice, namespace: 'team' };
const admin = makePrincipal({ id: 'admin', roles: { local: 'owner' }, admin: true });

function quota(
  defaults: Partial<UsageLimits>,
  store = new FakeStore(),
  clock = { t: Date.UTC(2026, 11, 7, 23, 59, 0) },
) {
  const service = new QuotaService({
    defaults: { ...NO_LIMITS, ...defaults },
    usage: store,
    limits: store,
    namespaces: { get: (n) => Promise.resolve({ name: n, owner: 'admin', createdAt: '' }) },
    now: () => clock.t,
  });
  return { service, store, clock };
}

/** The refusal of a call (admitRequest may throw at once: it is synchronous while its cache is fresh). */
async function refusal(call: () => unknown): Promise<AppError> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
  assert.fail('expected a refusal');
}

describe('QuotaService', () => {
  it('refuses the request past the per-minute limit with when it resets, and admits again after the minute', async () => {
    const { service, clock } = quota({ requestsPerMinute: 2 });
    await service.admitRequest(alice);
    clock.t += 10_000;
    await service.admitRequest(alice);
    clock.t += 5_000;
    const err = await refusal(() => service.admitRequest(alice));
    assert.equal(err.reason, 'BUDGET_EXCEEDED');
    assert.match(err.message, /Limit of 2 requests per minute reached \(the limits of namespace alice\)/);
    assert.equal(err.details['limit'], 'requestsPerMinute');
    assert.equal(err.details['retryAfterSeconds'], 45);
    assert.equal(err.details['resetsAt'], new Date(clock.t + 45_000).toISOString());
    // Another user has a window of their own.
    await service.admitRequest(makePrincipal({ id: 'bob', roles: { bob: 'owner' } }));
    clock.t += 45_000;
    await service.admitRequest(alice);
  });

  it('applies the limits of the namespace the request acts in: an override lowers or raises the default', async () => {
    const { service } = quota({ requestsPerMinute: 1 });
    await service.set('team', { requestsPerMinute: 3 }, admin);
    for (let i = 0; i < 3; i++) await service.admitRequest(inTeam);
    await refusal(() => service.admitRequest(inTeam));
    const { service: lowered } = quota({ requestsPerMinute: 0 });
    await lowered.set('team', { requestsPerMinute: 1 }, admin);
    await lowered.admitRequest(inTeam);
    assert.match((await refusal(() => lowered.admitRequest(inTeam))).message, /namespace team/);
    // The user's own namespace keeps the default (no limit).
    for (let i = 0; i < 5; i++) await lowered.admitRequest(alice);
  });

  it('refuses a turn while the user has the concurrent turns running, counted by the store', async () => {
    const { service, store } = quota({ concurrentTurns: 2 });
    store.running.set('alice', 1);
    await service.admitTurn(alice);
    store.running.set('alice', 2);
    const err = await refusal(() => service.admitTurn(alice));
    assert.equal(err.details['limit'], 'concurrentTurns');
    assert.equal(err.details['retryAfterSeconds'], 10);
    assert.match(err.message, /Limit of 2 concurrent turns reached .* when one of your running turns ends/);
  });

  it("refuses a turn once the day's tokens are used, until midnight UTC", async () => {
    const { service, store } = quota({ tokensPerDay: 1000 });
    store.tokens.set('alice', 999);
    await service.admitTurn(alice);
    assert.equal(store.sinceAsked.at(-1), '2026-12-07T00:00:00.000Z');
    store.tokens.set('alice', 1000);
    const err = await refusal(() => service.admitTurn(alice));
    assert.equal(err.details['limit'], 'tokensPerDay');
    assert.equal(err.details['resetsAt'], '2026-12-08T00:00:00.000Z');
    assert.equal(err.details['retryAfterSeconds'], 60);
  });

  it('checks only the running turns of a turn that asks no model (an apply), and reads no tokens for it', async () => {
    const { service, store } = quota({ concurrentTurns: 1, tokensPerDay: 1000 });
    store.tokens.set('alice', 5000);
    const asked = store.sinceAsked.length;
    await service.admitTurn(alice, 'concurrentTurns');
    assert.equal(store.sinceAsked.length, asked, 'no token read');
    assert.equal((await refusal(() => service.admitTurn(alice))).details['limit'], 'tokensPerDay');
    store.running.set('alice', 1);
    assert.equal(
      (await refusal(() => service.admitTurn(alice, 'concurrentTurns'))).details['limit'],
      'concurrentTurns',
    );
  });

  it('never limits the local user', async () => {
    const { service, store } = quota({ requestsPerMinute: 1, concurrentTurns: 1, tokensPerDay: 1 });
    store.running.set('local', 5);
    store.tokens.set('local', 5);
    for (let i = 0; i < 3; i++) await service.admitRequest(LOCAL_PRINCIPAL);
    await service.admitTurn(LOCAL_PRINCIPAL);
  });

  it('lets only server administrators read or change limits; null returns a limit to the default', async () => {
    const { service } = quota({ tokensPerDay: 500 });
    assert.equal((await refusal(() => service.set('team', { tokensPerDay: 1 }, alice))).reason, 'FORBIDDEN');
    assert.equal((await refusal(() => service.get('team', alice))).reason, 'FORBIDDEN');
    const set = await service.set('team', { tokensPerDay: 2000, concurrentTurns: 3 }, admin);
    assert.deepEqual(set.overrides, { tokensPerDay: 2000, concurrentTurns: 3 });
    assert.deepEqual(set.limits, { requestsPerMinute: 0, concurrentTurns: 3, tokensPerDay: 2000 });
    const back = await service.set('team', { tokensPerDay: null }, admin);
    assert.deepEqual(back.overrides, { concurrentTurns: 3 });
    assert.equal(back.limits.tokensPerDay, 500);
    assert.equal(back.updatedBy, 'admin');
    const err = await refusal(() => service.set('team', { tokensPerDay: -1 }, admin));
    assert.equal(err.reason, 'INVALID_PARAMS');
  });

  it("sees another instance's change once its cache is old, and keeps the limits it has when the database fails", async () => {
    const { service, store, clock } = quota({ requestsPerMinute: 0 });
    await service.admitRequest(inTeam);
    store.rows.set('team', { namespace: 'team', limits: { requestsPerMinute: 1 }, updatedAt: '', updatedBy: 'x' });
    clock.t += 16_000;
    await service.admitRequest(inTeam);
    await refusal(() => service.admitRequest(inTeam));
    store.failList = true;
    clock.t += 61_000;
    await service.admitRequest(inTeam);
    assert.equal((await refusal(() => service.admitRequest(inTeam))).details['limit'], 'requestsPerMinute');
  });
});

/**
 * The contract runner: every suite, written once, runs over the in-memory, stdio and HTTP
 * transports. Afterwards it asserts the transports gave the same results (parity) and that every
 * method of the table was exercised (coverage).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONTRACTS } from '../../src/protocol/client/index.ts';
import { buildMethodTable } from '../../src/protocol/a2a/method-table.ts';
import { normalize, startHarness, TRANSPORTS, type Harness, type TransportName } from '../support/harness.ts';
import { a2aSuite } from './a2a.suite.ts';
import { registrySuite } from './registry.suite.ts';
import { planSuite } from './plan.suite.ts';
import { contextSuite } from './context.suite.ts';
import { syncSuite } from './sync.suite.ts';
import { accountSuite } from './account.suite.ts';
import { idempotencySuite } from './idempotency.suite.ts';
import { LLM_TEST_KEY, llmSuite } from './llm.suite.ts';
import { namespaceSuite } from './namespace.suite.ts';
import { secretSuite } from './secret.suite.ts';
import type { ClientTransport } from '../../src/protocol/client/index.ts';
import { createPgDatabase, pgSkip, type PgTestDatabase } from '../support/postgres.ts';

// LLM actors read their keys from the agent's environment (the stdio and HTTP agents inherit it).
process.env['LLM_TEST_KEY'] = LLM_TEST_KEY;
process.env['LLM_WRONG_KEY'] = 'sk-wrong-key-000';

/**
 * Every transport on the embedded SQLite default, and HTTP once more on PostgreSQL (`http-pg`,
 * when CA_TEST_PG_URL names a server — always in CI): the same suites, the same results.
 */
interface Run {
  key: string;
  transport: TransportName;
  postgres: boolean;
}
const RUNS: Run[] = [
  ...TRANSPORTS.map((t) => ({ key: t, transport: t, postgres: false })),
  ...(pgSkip() === false && TRANSPORTS.includes('http')
    ? [{ key: 'http-pg', transport: 'http' as const, postgres: true }]
    : []),
];
const results = new Map<string, Map<string, unknown>>();
const called = new Map<string, Set<string>>();
const table = buildMethodTable();

/** Records the canonical name of every method a transport is asked to call. */
function recording(t: ClientTransport, into: Set<string>): ClientTransport {
  const note = (method: string): void => {
    const row = table.v1.get(method) ?? table.v03.get(method);
    if (row) into.add(row.name);
  };
  return new Proxy(t, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if ((prop === 'request' || prop === 'stream') && typeof v === 'function') {
        return (method: string, ...rest: unknown[]) => {
          note(method);
          return (v as (...a: unknown[]) => unknown).call(target, method, ...rest);
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

for (const { key, transport, postgres } of RUNS) {
  describe(`contract over ${transport}${postgres ? ' on PostgreSQL' : ''}`, () => {
    let h: Harness;
    let db: PgTestDatabase | undefined;
    const seen = new Set<string>();
    called.set(key, seen);
    before(async () => {
      db = postgres ? await createPgDatabase('ca_contract') : undefined;
      const raw = await startHarness(transport, db ? { env: { CLEVERAGENTS_DATABASE_URL: db.url } } : {});
      h = {
        ...raw,
        client: Object.assign(Object.create(Object.getPrototypeOf(raw.client)), raw.client, {
          transport: recording(raw.client.transport, seen),
        }),
        connect: async (v) => {
          const c = await raw.connect(v);
          return Object.assign(Object.create(Object.getPrototypeOf(c)), c, { transport: recording(c.transport, seen) });
        },
      };
    });
    after(async () => {
      await h?.close();
      await db?.drop();
    });
    const ctx = {
      transport,
      harness: () => h,
      record: (name: string, value: unknown) => {
        let m = results.get(name);
        if (!m) results.set(name, (m = new Map()));
        m.set(key, normalize(value));
      },
    };
    describe('A2A spine', () => a2aSuite(ctx));
    describe('registries', () => registrySuite(ctx));
    describe('plans', () => planSuite(ctx));
    describe('context', () => contextSuite(ctx));
    describe('accounts', () => accountSuite(ctx));
    describe('idempotent sends', () => idempotencySuite(ctx));
    describe('chat with LLM actors', () => llmSuite(ctx));
    describe('namespace management', () => namespaceSuite(ctx));
    describe('secrets', () => secretSuite(ctx));
    describe('sync', () => syncSuite(ctx));
  });
}

describe('across transports', () => {
  it('gives the same results over every transport', () => {
    assert.ok(results.size > 10, 'the suites recorded their results');
    for (const [name, byTransport] of results) {
      assert.equal(byTransport.size, RUNS.length, `${name} ran on every transport`);
      const [first, ...rest] = RUNS.map((r) => r.key);
      for (const t of rest)
        assert.deepEqual(byTransport.get(t), byTransport.get(first ?? ''), `${name}: ${t} differs from ${first}`);
    }
  });

  it('exercises every method of the table on every transport', () => {
    assert.deepEqual([...called.keys()].sort(), RUNS.map((r) => r.key).sort(), 'every transport recorded its calls');
    for (const [t, seen] of called) {
      const missing = CONTRACTS.map((m) => m.name).filter((n) => !seen.has(n));
      assert.deepEqual(missing, [], `methods without a contract test over ${t}`);
    }
  });
});

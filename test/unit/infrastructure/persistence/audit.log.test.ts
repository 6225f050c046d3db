/** The audit log (AuditLog) on every storage engine. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { AuditEvent, AuditLog } from '../../../../src/application/index.ts';
import { SqliteAuditLog } from '../../../../src/infrastructure/index.ts';
import { PgAuditLog } from '../../../../src/infrastructure/persistence/postgres/pg-audit.log.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';

function auditOf(opened: OpenedEngine): AuditLog {
  if (opened.pg) return new PgAuditLog(opened.pg);
  if (!opened.sqlite) throw new Error('no database');
  return new SqliteAuditLog(opened.sqlite);
}

/** Event n: ids sort as n does (as ULIDs sort by time), one minute apart. */
const event = (n: number, extra: Partial<AuditEvent> = {}): AuditEvent => ({
  id: `01J${String(n).padStart(23, '0')}`,
  at: new Date(Date.parse('2026-03-01T10:00:00.000Z') + n * 60_000).toISOString(),
  event: 'auth.login',
  outcome: 'ok',
  ...extra,
});

for (const engine of ENGINES) {
  describe(`audit log on ${engine.name}`, { skip: engine.skip() }, () => {
    let opened: OpenedEngine;
    let audit: AuditLog;
    beforeEach(async () => {
      opened = await engine.open();
      audit = auditOf(opened);
    });
    afterEach(() => opened.close());

    it('keeps every field of an event, and leaves absent ones absent', async () => {
      const full = event(1, {
        event: 'member.added',
        principal: 'alice',
        credential: 'ca_aaaaaaaaaaaa',
        namespace: 'team',
        target: 'bob',
        outcome: 'refused',
        details: { role: 'viewer', nested: { n: 1, list: ['a'] } },
        client: '203.0.113.9',
      });
      await audit.append(full);
      await audit.append(event(2));
      assert.deepEqual(await audit.list({ limit: 10 }), [event(2), full]);
    });

    it('lists newest first, filtered by event, principal, namespace and since, paged by id', async () => {
      await audit.append(event(1, { principal: 'alice', namespace: 'a' }));
      await audit.append(event(2, { principal: 'bob', namespace: 'a', event: 'auth.refused', outcome: 'refused' }));
      await audit.append(event(3, { principal: 'alice', namespace: 'b' }));
      await audit.append(event(4, { principal: 'alice', namespace: 'a', event: 'key.created' }));
      const ids = (events: AuditEvent[]) => events.map((e) => Number(e.id.slice(3)));
      assert.deepEqual(ids(await audit.list({ limit: 10 })), [4, 3, 2, 1]);
      assert.deepEqual(ids(await audit.list({ limit: 2 })), [4, 3]);
      assert.deepEqual(ids(await audit.list({ limit: 2, before: event(3).id })), [2, 1]);
      assert.deepEqual(ids(await audit.list({ limit: 10, principal: 'alice' })), [4, 3, 1]);
      assert.deepEqual(ids(await audit.list({ limit: 10, namespace: 'a' })), [4, 2, 1]);
      assert.deepEqual(ids(await audit.list({ limit: 10, event: 'auth.refused' })), [2]);
      assert.deepEqual(ids(await audit.list({ limit: 10, since: event(3).at })), [4, 3]);
      assert.deepEqual(
        ids(await audit.list({ limit: 10, principal: 'alice', namespace: 'a', since: event(2).at })),
        [4],
      );
    });

    it('prunes the events older than an instant and says how many', async () => {
      for (const n of [1, 2, 3]) await audit.append(event(n));
      assert.equal(await audit.prune(event(3).at), 2);
      assert.equal(await audit.prune(event(3).at), 0);
      assert.deepEqual(await audit.list({ limit: 10 }), [event(3)]);
    });
  });
}

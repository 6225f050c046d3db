import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../../src/domain/errors.ts';
import type { Decision, Plan } from '../../../../src/domain/plan/plan.ts';
import type { Session } from '../../../../src/domain/session.ts';
import { LOCAL_PRINCIPAL, systemPrincipalFor, type Principal } from '../../../../src/application/ports/principal.ts';
import { StoredPlanLookup } from '../../../../src/main/composition/context.wiring.ts';
import { NamespaceWorkCleaner } from '../../../../src/main/composition/namespaces.wiring.ts';

// Only the fields these adapters read; the rest of a Plan does not matter to them.
const plan = (id: string, owner: string): Plan =>
  ({ id, owner, projects: ['local/p'], arguments: {} }) as unknown as Plan;
const decision = (planId: string, question: string): Decision => ({ planId, question }) as unknown as Decision;
const session = (id: string): Session => ({ id }) as unknown as Session;

describe('StoredPlanLookup (the context service reaching plans)', () => {
  const plans = new Map([
    ['p1', plan('p1', 'local')],
    ['p2', plan('p2', 'team')],
  ]);
  const lookup = new StoredPlanLookup({
    get: (id) => Promise.resolve(plans.get(id)),
    decisions: (id) => Promise.resolve(id === 'p1' ? [decision('p1', 'which file?')] : []),
  });

  it('answers the caller’s plan with its decisions', async () => {
    const got = await lookup.get('p1', LOCAL_PRINCIPAL);
    assert.deepEqual(got.projects, ['local/p']);
    assert.deepEqual(
      got.decisions?.map((d) => d.question),
      ['which file?'],
    );
  });

  it('answers NOT_FOUND for someone else’s plan and for a missing one alike', async () => {
    for (const id of ['p2', 'nope']) {
      await assert.rejects(lookup.get(id, LOCAL_PRINCIPAL), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.reason, 'NOT_FOUND');
        assert.equal(err.message, `Plan ${id} was not found`);
        return true;
      });
    }
  });
});

describe('NamespaceWorkCleaner (what deleting a namespace clears)', () => {
  const setup = (running: ReadonlySet<string>) => {
    const deletedPlans: Array<{ id: string; force: boolean | undefined; by: Principal }> = [];
    const deletedSessions: string[] = [];
    const sessions = ['s1', 's2', 's3'];
    const cleaner = new NamespaceWorkCleaner({
      plans: { list: (q) => Promise.resolve(q.owner === 'team' ? [plan('p1', 'team'), plan('p2', 'team')] : []) },
      // Two sessions a page, as the store pages them; a deleted session leaves the list.
      sessions: {
        list: (owner) =>
          Promise.resolve({
            sessions:
              owner === 'team'
                ? sessions
                    .filter((s) => !deletedSessions.includes(s))
                    .slice(0, 2)
                    .map(session)
                : [],
            total: 0,
          }),
      },
      engine: { running },
      housekeeping: {
        delete: (id, opts, by) => {
          deletedPlans.push({ id, force: opts.force, by });
          return Promise.resolve({ planId: id, deleted: true } as never);
        },
      },
      sessionDeletion: {
        delete: (id: string) => {
          deletedSessions.push(id);
          return Promise.resolve({ deleted: true as const, tasksDeleted: 0 });
        },
      },
    });
    return { cleaner, deletedPlans, deletedSessions };
  };

  it('counts only the namespace’s plans that run here', async () => {
    const { cleaner } = setup(new Set(['p2', 'elsewhere']));
    assert.equal(await cleaner.runningPlans('team'), 1);
    assert.equal(await cleaner.runningPlans('other'), 0);
  });

  it('deletes every plan (forced, as the namespace’s system principal) and every session, page after page', async () => {
    const { cleaner, deletedPlans, deletedSessions } = setup(new Set());
    await cleaner.clear('team');
    assert.deepEqual(
      deletedPlans.map((d) => [d.id, d.force]),
      [
        ['p1', true],
        ['p2', true],
      ],
    );
    assert.ok(deletedPlans.every((d) => d.by.id === systemPrincipalFor('team').id && d.by.namespace === 'team'));
    assert.deepEqual(deletedSessions, ['s1', 's2', 's3']);
  });
});

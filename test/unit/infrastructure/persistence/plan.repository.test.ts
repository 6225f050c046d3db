/** The plan repository on both engines: plans as documents with filterable columns, and their records. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { PlanRepository } from '../../../../src/application/index.ts';
import type { Checkpoint, Decision, Plan, ToolCallRecord } from '../../../../src/domain/plan/plan.ts';
import { SqlitePlanRepository } from '../../../../src/infrastructure/index.ts';
import { createMigrator, migrateToLatest } from '../../../../src/infrastructure/persistence/migrator.ts';
import { PgPlanRepository } from '../../../../src/infrastructure/persistence/postgres/pg-plan.repository.ts';
import { ENGINES, type OpenedEngine } from '../../../support/engines.ts';
import { aPlan } from '../../../support/builders.ts';

const at = (s: number): string => new Date(Date.parse('2026-03-01T10:00:00.000Z') + s * 1000).toISOString();

function plan(id: string, created: number, extra: Partial<Plan> = {}): Plan {
  return aPlan({
    ...{ id, name: id, action: 'local/act', arguments: { n: 1, dry: true }, automationProfile: 'auto' },
    ...{ owner: 'alice', createdAt: at(created), updatedAt: at(created), stepsTotal: 2 },
    ...extra,
  });
}

function decision(id: string, planId: string, rationale = 'r'): Decision {
  return {
    id,
    planId,
    type: 'step',
    question: 'q',
    chosen: { tool: 'write', args: { path: 'a' } },
    alternatives: [],
    confidence: 0.5,
    rationale,
    context: {},
    superseded: false,
    attempt: 1,
    createdAt: at(1),
  };
}

function checkpoint(id: string, planId: string): Checkpoint {
  return { id, planId, label: 'l', commits: { 'local/r': 'abc' }, stepIndex: 1, createdAt: at(2) };
}

function toolCall(id: string, planId: string): ToolCallRecord {
  return {
    id,
    planId,
    decisionId: 'd1',
    tool: 'write',
    args: {},
    ok: true,
    summary: 's',
    durationMs: 3,
    filesTouched: ['a'],
    resource: 'local/r',
    createdAt: at(3),
  };
}

for (const engine of ENGINES)
  describe(`plan repository on ${engine.name}`, { skip: engine.skip() }, () => {
    let db: OpenedEngine;
    let repo: PlanRepository;

    beforeEach(async () => {
      db = await engine.open();
      repo = db.pg ? new PgPlanRepository(db.pg) : new SqlitePlanRepository(db.sqlite!);
    });
    afterEach(() => db.close());

    it('stores a plan whole and saves its changes', async () => {
      const p = plan('p1', 0);
      await repo.create(p);
      assert.deepEqual(await repo.get('p1'), p);
      assert.equal(await repo.get('p2'), undefined);
      const next: Plan = { ...p, phase: 'execute', state: 'processing', cursor: 1, updatedAt: at(9) };
      await repo.save(next);
      assert.deepEqual(await repo.get('p1'), next);
      // The filterable columns follow the document.
      assert.deepEqual(
        (await repo.list({ owner: 'alice', phase: 'execute', state: 'processing' })).map((x) => x.id),
        ['p1'],
      );
      assert.deepEqual(await repo.list({ owner: 'alice', phase: 'strategize' }), []);
    });

    it('lists an owner’s plans newest first, by phase, state and action', async () => {
      await repo.create(plan('a', 1));
      await repo.create(plan('b', 2, { phase: 'execute', state: 'complete' }));
      await repo.create(plan('c', 2, { action: 'local/other' }));
      await repo.create(plan('d', 3, { owner: 'bob' }));
      const ids = async (q: Parameters<PlanRepository['list']>[0]) => (await repo.list(q)).map((p) => p.id);
      // Equal creation times: the larger id first.
      assert.deepEqual(await ids({ owner: 'alice' }), ['c', 'b', 'a']);
      assert.deepEqual(await ids({ owner: 'alice', phase: 'strategize' }), ['c', 'a']);
      assert.deepEqual(await ids({ owner: 'alice', state: 'complete' }), ['b']);
      assert.deepEqual(await ids({ owner: 'alice', action: 'local/other' }), ['c']);
      assert.deepEqual(await ids({ owner: 'bob' }), ['d']);
      assert.deepEqual(
        (await repo.listByState('queued')).map((p) => p.id),
        ['a', 'c', 'd'],
      );
    });

    it('keeps decisions, checkpoints and tool calls per plan in id order; a put again replaces', async () => {
      await repo.create(plan('p1', 0));
      await repo.create(plan('p2', 0));
      await repo.putDecision(decision('d2', 'p1'));
      await repo.putDecision(decision('d1', 'p1'));
      await repo.putDecision(decision('d1', 'p1', 'revised'));
      await repo.putDecision(decision('d3', 'p2'));
      await repo.putCheckpoint(checkpoint('c1', 'p1'));
      await repo.putToolCall(toolCall('t1', 'p1'));
      assert.deepEqual(await repo.decisions('p1'), [decision('d1', 'p1', 'revised'), decision('d2', 'p1')]);
      assert.deepEqual(await repo.checkpoints('p1'), [checkpoint('c1', 'p1')]);
      assert.deepEqual(await repo.toolCalls('p1'), [toolCall('t1', 'p1')]);
      assert.deepEqual(await repo.checkpoints('p2'), []);
      const all = await repo.recordsOf(['p1', 'p2', 'p9']);
      assert.deepEqual([...all.keys()], ['p1', 'p2', 'p9']);
      assert.deepEqual(all.get('p1'), {
        decisions: [decision('d1', 'p1', 'revised'), decision('d2', 'p1')],
        checkpoints: [checkpoint('c1', 'p1')],
        toolCalls: [toolCall('t1', 'p1')],
      });
      assert.deepEqual(all.get('p2'), { decisions: [decision('d3', 'p2')], checkpoints: [], toolCalls: [] });
      assert.deepEqual(all.get('p9'), { decisions: [], checkpoints: [], toolCalls: [] });
      assert.deepEqual((await repo.recordsOf([])).size, 0);
    });

    it('keeps a command’s output apart: the lists leave it out, the output reads and the last command carry it', async () => {
      await repo.create(plan('p1', 0));
      await repo.create(plan('p2', 0));
      // A MiB with what PostgreSQL's text refuses bare (NUL) and what needs escaping in JSON.
      const big = `${'x'.repeat(1024 * 1024 - 64)}\u0000 "quoted" \\ é 😀\n`;
      const ran = { ...toolCall('t1', 'p1'), output: { text: big, bytes: 2_000_000, truncated: true } };
      const edit = toolCall('t2', 'p1');
      await repo.putToolCall(ran);
      await repo.putToolCall(edit);
      await repo.putToolCall({ ...toolCall('t3', 'p2'), output: { text: 'other plan', bytes: 10, truncated: false } });
      assert.deepEqual(await repo.toolCalls('p1'), [toolCall('t1', 'p1'), edit]);
      assert.deepEqual((await repo.recordsOf(['p1'])).get('p1')?.toolCalls, [toolCall('t1', 'p1'), edit]);
      assert.deepEqual(await repo.toolCallOutputs('p1', ['t1', 't2', 't3']), new Map([['t1', ran.output]]));
      assert.deepEqual(await repo.toolCallOutputs('p1', []), new Map());
      assert.deepEqual(
        await repo.lastCommandCall('p1'),
        ran,
        'the newest call that kept an output, not the newest call',
      );
      assert.equal(await repo.lastCommandCall('p9'), undefined);
      // A put again replaces the output too (a cancelled call stored, then recorded).
      const again = { ...ran, output: { text: 'short', bytes: 5, truncated: false } };
      await repo.putToolCall(again);
      assert.deepEqual(await repo.lastCommandCall('p1'), again);
      assert.equal(await repo.delete('p1'), true);
      assert.deepEqual(await repo.toolCallOutputs('p1', ['t1']), new Map());
    });

    it('reads the tool calls a database kept before outputs were (0016 not yet run)', async () => {
      const kysely = db.pg ? db.pg.kysely : db.sqlite!.kysely;
      assert.equal((await createMigrator(kysely).migrateTo('0013_grants_and_secrets')).error, undefined);
      await repo.create(plan('p1', 0));
      // A record as the code before 0016 wrote it: no output column.
      await kysely
        .insertInto('plan_records')
        .values({
          kind: 'toolcall',
          id: 't1',
          plan_id: 'p1',
          created_at: at(3),
          doc: JSON.stringify(toolCall('t1', 'p1')),
        })
        .execute();
      await migrateToLatest(kysely);
      assert.deepEqual(await repo.toolCalls('p1'), [toolCall('t1', 'p1')]);
      assert.deepEqual(await repo.toolCallOutputs('p1', ['t1']), new Map());
      assert.equal(await repo.lastCommandCall('p1'), undefined);
    });

    it('deletes a plan with all its records', async () => {
      await repo.create(plan('p1', 0));
      await repo.create(plan('p2', 0));
      await repo.putDecision(decision('d1', 'p1'));
      await repo.putCheckpoint(checkpoint('c1', 'p1'));
      await repo.putToolCall(toolCall('t1', 'p1'));
      await repo.putDecision(decision('d2', 'p2'));
      assert.equal(await repo.delete('p1'), true);
      assert.equal(await repo.delete('p1'), false);
      assert.equal(await repo.get('p1'), undefined);
      const left = await repo.recordsOf(['p1', 'p2']);
      assert.deepEqual(left.get('p1'), { decisions: [], checkpoints: [], toolCalls: [] });
      assert.equal(left.get('p2')?.decisions.length, 1);
    });
  });

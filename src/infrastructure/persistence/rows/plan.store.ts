import type { CommandOutput } from '../../../domain/plan/command-output.ts';
import type { Checkpoint, Decision, PhaseState, Plan, ToolCallRecord } from '../../../domain/plan/plan.ts';
import type { PlanListQuery, PlanRecords, PlanRepository } from '../../../application/index.ts';
import { idStartsWith } from './id-prefix.ts';
import type { SqlRunner } from './sql-runner.ts';

type RecordKind = 'decision' | 'checkpoint' | 'toolcall';

/** Plans as JSON documents with their filterable columns; records in one table, ordered by ULID. */
export class PlanStore implements PlanRepository {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async create(plan: Plan): Promise<void> {
    await this.db.run((k) => k.insertInto('plans').values(toRow(plan)).execute());
  }

  async get(id: string): Promise<Plan | undefined> {
    const row = await this.db.run((k) => k.selectFrom('plans').select('doc').where('id', '=', id).executeTakeFirst());
    return row && (JSON.parse(row.doc) as Plan);
  }

  async save(plan: Plan): Promise<void> {
    const { id, ...rest } = toRow(plan);
    await this.db.run((k) => k.updateTable('plans').set(rest).where('id', '=', id).execute());
  }

  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.deleteFrom('plan_records').where('plan_id', '=', id).execute();
      const r = await tx.deleteFrom('plans').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  async list(q: PlanListQuery): Promise<Plan[]> {
    const rows = await this.db.run((k) => {
      let query = k.selectFrom('plans').select('doc').where('owner', '=', q.owner);
      if (q.phase) query = query.where('phase', '=', q.phase);
      if (q.state) query = query.where('state', '=', q.state);
      if (q.action) query = query.where('action', '=', q.action);
      query = query.orderBy('created_at', 'desc').orderBy('id', 'desc');
      return (q.limit === undefined ? query : query.limit(q.limit)).execute();
    });
    return rows.map((r) => JSON.parse(r.doc) as Plan);
  }

  async byIdPrefix(owner: string, prefix: string, limit: number): Promise<Plan[]> {
    const rows = await this.db.run((k) =>
      k
        .selectFrom('plans')
        .select('doc')
        .where('owner', '=', owner)
        .where(idStartsWith('id', prefix))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute(),
    );
    return rows.map((r) => JSON.parse(r.doc) as Plan);
  }

  putDecision(d: Decision): Promise<void> {
    return this.put('decision', d.id, d.planId, d.createdAt, d);
  }

  decisions(planId: string): Promise<Decision[]> {
    return this.records<Decision>('decision', planId);
  }

  putCheckpoint(c: Checkpoint): Promise<void> {
    return this.put('checkpoint', c.id, c.planId, c.createdAt, c);
  }

  checkpoints(planId: string): Promise<Checkpoint[]> {
    return this.records<Checkpoint>('checkpoint', planId);
  }

  putToolCall(t: ToolCallRecord): Promise<void> {
    const { output, ...record } = t;
    return this.put('toolcall', t.id, t.planId, t.createdAt, record, output ? JSON.stringify(output) : null);
  }

  toolCalls(planId: string): Promise<ToolCallRecord[]> {
    return this.records<ToolCallRecord>('toolcall', planId);
  }

  async toolCallOutputs(planId: string, ids: readonly string[]): Promise<Map<string, CommandOutput>> {
    const out = new Map<string, CommandOutput>();
    if (ids.length === 0) return out;
    const rows = await this.db.run((k) =>
      k
        .selectFrom('plan_records')
        .select(['id', 'output'])
        .where('kind', '=', 'toolcall')
        .where('plan_id', '=', planId)
        .where('id', 'in', [...ids])
        .where('output', 'is not', null)
        .execute(),
    );
    for (const r of rows) if (r.output !== null) out.set(r.id, JSON.parse(r.output) as CommandOutput);
    return out;
  }

  async lastCommandCall(planId: string): Promise<ToolCallRecord | undefined> {
    const row = await this.db.run((k) =>
      k
        .selectFrom('plan_records')
        .select(['doc', 'output'])
        .where('plan_id', '=', planId)
        .where('kind', '=', 'toolcall')
        .where('output', 'is not', null)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst(),
    );
    if (!row?.output) return undefined;
    return { ...(JSON.parse(row.doc) as ToolCallRecord), output: JSON.parse(row.output) as CommandOutput };
  }

  async recordsOf(planIds: readonly string[]): Promise<Map<string, PlanRecords>> {
    const out = new Map<string, PlanRecords>(
      planIds.map((id) => [id, { decisions: [], checkpoints: [], toolCalls: [] }]),
    );
    if (planIds.length === 0) return out;
    const rows = await this.db.run((k) =>
      k
        .selectFrom('plan_records')
        .select(['kind', 'plan_id', 'doc'])
        .where('plan_id', 'in', [...planIds])
        .orderBy('id')
        .execute(),
    );
    for (const r of rows) {
      const records = out.get(r.plan_id);
      if (!records) continue;
      const doc: unknown = JSON.parse(r.doc);
      if (r.kind === 'decision') records.decisions.push(doc as Decision);
      else if (r.kind === 'checkpoint') records.checkpoints.push(doc as Checkpoint);
      else records.toolCalls.push(doc as ToolCallRecord);
    }
    return out;
  }

  async listByState(state: PhaseState): Promise<Plan[]> {
    const rows = await this.db.run((k) =>
      k.selectFrom('plans').select('doc').where('state', '=', state).orderBy('id').execute(),
    );
    return rows.map((r) => JSON.parse(r.doc) as Plan);
  }

  private async put(
    kind: RecordKind,
    id: string,
    planId: string,
    createdAt: string,
    doc: unknown,
    output: string | null = null,
  ): Promise<void> {
    const text = JSON.stringify(doc);
    await this.db.run((k) =>
      k
        .insertInto('plan_records')
        .values({ kind, id, plan_id: planId, created_at: createdAt, doc: text, output })
        .onConflict((oc) => oc.columns(['kind', 'id']).doUpdateSet({ doc: text, output }))
        .execute(),
    );
  }

  private async records<T>(kind: RecordKind, planId: string): Promise<T[]> {
    const rows = await this.db.run((k) =>
      k
        .selectFrom('plan_records')
        .select('doc')
        .where('plan_id', '=', planId)
        .where('kind', '=', kind)
        .orderBy('id')
        .execute(),
    );
    return rows.map((r) => JSON.parse(r.doc) as T);
  }
}

function toRow(p: Plan) {
  return {
    id: p.id,
    owner: p.owner,
    action: p.action,
    phase: p.phase,
    state: p.state,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    doc: JSON.stringify(p),
  };
}

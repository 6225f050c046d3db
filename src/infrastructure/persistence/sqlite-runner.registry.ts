import { param, type SqliteDatabase } from './database.ts';
import { RunnerLeases, type LeaseRow, type NewLease, type RunnerRegistryOptions } from './runner-leases.ts';

export type SqliteRunnerRegistryOptions = RunnerRegistryOptions;

/** Runner leases in the SQLite `runners` table (semantics: {@link RunnerLeases}). */
export class SqliteRunnerRegistry extends RunnerLeases {
  private readonly q;

  private readonly db: SqliteDatabase;

  constructor(db: SqliteDatabase, opts: SqliteRunnerRegistryOptions) {
    super(opts);
    this.db = db;
    const k = db.kysely;
    const id = param<string>('id');
    this.q = {
      insert: db.prepare(
        k.insertInto('runners').values({
          id,
          pid: param('pid'),
          host: param('host'),
          started_at: param('started_at'),
          heartbeat_at: param('heartbeat_at'),
        }),
      ),
      renew: db.prepare(
        k
          .updateTable('runners')
          .set({ heartbeat_at: param('at') })
          .where('id', '=', id),
      ),
      get: db.prepare(k.selectFrom('runners').select(['pid', 'host', 'heartbeat_at']).where('id', '=', id)),
      all: db.prepare(k.selectFrom('runners').select(['id', 'pid', 'host', 'heartbeat_at'])),
      remove: db.prepare(k.deleteFrom('runners').where('id', '=', id)),
      removeStale: db.prepare(
        k.deleteFrom('runners').where('id', '=', id).where('heartbeat_at', '=', param<string>('at')),
      ),
    };
  }

  protected async insertLease(row: NewLease): Promise<void> {
    await this.db.write(() => this.q.insert.run({ ...row }));
  }

  protected renewLease(id: string, at: string): Promise<number> {
    return this.db.write(() => this.q.renew.run({ id, at }));
  }

  protected getLease(id: string): Promise<LeaseRow | undefined> {
    return this.db.exclusive(() => this.q.get.get({ id }));
  }

  protected listLeases(): Promise<(LeaseRow & { id: string })[]> {
    return this.db.exclusive(() => this.q.all.all());
  }

  protected removeLease(id: string, heartbeatAt?: string): Promise<number> {
    return this.db.write(() =>
      heartbeatAt === undefined ? this.q.remove.run({ id }) : this.q.removeStale.run({ id, at: heartbeatAt }),
    );
  }
}

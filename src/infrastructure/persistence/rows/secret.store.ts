import {
  namespaceNotFound,
  type SecretStore,
  type SecretSummary,
  type SecretWrite,
  type StoredSecret,
} from '../../../application/index.ts';
import type { SqlRunner } from './sql-runner.ts';

/**
 * The namespace_secrets table (migration 0013), written once against Kysely: ciphertexts only.
 * A namespace's rows go with it (the foreign key cascades), so a purge needs nothing here.
 */
export class SecretTableStore implements SecretStore {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async put(s: StoredSecret): Promise<SecretWrite> {
    try {
      return await this.db.transaction(async (tx) => {
        let prior = tx
          .selectFrom('namespace_secrets')
          .select(['created_at', 'created_by'])
          .where('namespace', '=', s.namespace)
          .where('name', '=', s.name);
        // On PostgreSQL a concurrent set of the same secret waits here for this one.
        if (this.db.engine === 'postgresql') prior = prior.forUpdate();
        const before = await prior.executeTakeFirst();
        // An upsert even so: two first sets at once both insert, and the later one's value wins.
        await tx
          .insertInto('namespace_secrets')
          .values({
            namespace: s.namespace,
            name: s.name,
            ciphertext: s.ciphertext,
            created_by: s.createdBy,
            created_at: s.createdAt,
            updated_at: s.updatedAt,
          })
          .onConflict((oc) =>
            oc.columns(['namespace', 'name']).doUpdateSet({ ciphertext: s.ciphertext, updated_at: s.updatedAt }),
          )
          .execute();
        return before
          ? { created: false, createdAt: before.created_at, createdBy: before.created_by }
          : { created: true, createdAt: s.createdAt, createdBy: s.createdBy };
      });
    } catch (err) {
      if (this.db.isConstraint(err, 'foreign')) throw namespaceNotFound(s.namespace);
      throw err;
    }
  }

  async get(namespace: string, name: string): Promise<StoredSecret | undefined> {
    const r = await this.db.run((k) =>
      k
        .selectFrom('namespace_secrets')
        .selectAll()
        .where('namespace', '=', namespace)
        .where('name', '=', name)
        .executeTakeFirst(),
    );
    return (
      r && {
        namespace: r.namespace,
        name: r.name,
        ciphertext: r.ciphertext,
        createdBy: r.created_by,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }
    );
  }

  async list(namespace: string): Promise<SecretSummary[]> {
    const rows = await this.db.run((k) =>
      k
        .selectFrom('namespace_secrets')
        .select(['name', 'created_by', 'created_at', 'updated_at'])
        .where('namespace', '=', namespace)
        .orderBy('name')
        .execute(),
    );
    return rows.map((r) => ({
      name: r.name,
      createdBy: r.created_by,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  async count(namespace: string): Promise<number> {
    const r = await this.db.run((k) =>
      k
        .selectFrom('namespace_secrets')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('namespace', '=', namespace)
        .executeTakeFirst(),
    );
    return Number(r?.n ?? 0);
  }

  async remove(namespace: string, name: string): Promise<boolean> {
    const r = await this.db.run((k) =>
      k.deleteFrom('namespace_secrets').where('namespace', '=', namespace).where('name', '=', name).executeTakeFirst(),
    );
    return Number(r.numDeletedRows) > 0;
  }
}

import type { CapabilityGrant, GrantRepository } from '../../../application/index.ts';
import type { Capability } from '../../../domain/registry/capabilities.ts';
import type { SqlRunner } from './sql-runner.ts';

/** Capability grants (migration 0013), the same queries on SQLite and PostgreSQL. */
export class GrantStore implements GrantRepository {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async list(namespace: string): Promise<CapabilityGrant[]> {
    const rows = await this.db.run((k) =>
      k.selectFrom('namespace_grants').selectAll().where('namespace', '=', namespace).orderBy('capability').execute(),
    );
    return rows.map((r) => ({
      namespace: r.namespace,
      capability: r.capability as Capability,
      ...(r.paths !== null ? { paths: JSON.parse(r.paths) as string[] } : {}),
      grantedBy: r.granted_by,
      grantedAt: r.granted_at,
    }));
  }

  async put(g: CapabilityGrant): Promise<boolean> {
    const row = {
      namespace: g.namespace,
      capability: g.capability,
      paths: g.paths ? JSON.stringify(g.paths) : null,
      granted_by: g.grantedBy,
      granted_at: g.grantedAt,
    };
    try {
      await this.db.run((k) =>
        k
          .insertInto('namespace_grants')
          .values(row)
          .onConflict((oc) =>
            oc
              .columns(['namespace', 'capability'])
              .doUpdateSet({ paths: row.paths, granted_by: row.granted_by, granted_at: row.granted_at }),
          )
          .execute(),
      );
      return true;
    } catch (err) {
      if (this.db.isConstraint(err, 'foreign')) return false;
      throw err;
    }
  }

  async remove(namespace: string, capability: Capability): Promise<boolean> {
    const res = await this.db.run((k) =>
      k
        .deleteFrom('namespace_grants')
        .where('namespace', '=', namespace)
        .where('capability', '=', capability)
        .executeTakeFirst(),
    );
    return Number(res.numDeletedRows) > 0;
  }
}

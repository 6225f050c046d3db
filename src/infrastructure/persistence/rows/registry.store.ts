import type { Kysely } from 'kysely';
import { AppError } from '../../../domain/errors.ts';
import type { Definition, Reference, RegistryEntity, RegistryKind } from '../../../domain/registry/entities.ts';
import type {
  Member,
  NamespaceContents,
  NamespaceRecord,
  NamespaceRepository,
  Referrer,
  RegistryListQuery,
  RegistryRepository,
  Role,
} from '../../../application/index.ts';
import type { DB, RegistryEntitiesTable } from '../database-schema.ts';
import type { SqlRunner } from './sql-runner.ts';

/**
 * Registry entities and their references, written once against Kysely (not a hot path). A
 * replace is one conditional update of the entity row (`where revision = expected`): on
 * PostgreSQL a concurrent replace waits for the row lock and then finds the revision moved.
 */
export class RegistryStore implements RegistryRepository {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async get(kind: RegistryKind, name: string): Promise<RegistryEntity | undefined> {
    const row = await this.db.run((k) =>
      k
        .selectFrom('registry_entities')
        .selectAll()
        .where('kind', '=', kind)
        .where('name', '=', name)
        .executeTakeFirst(),
    );
    return row && toEntity(row);
  }

  async list(q: RegistryListQuery): Promise<RegistryEntity[]> {
    if (q.namespaces.length === 0) return [];
    const rows = await this.db.run((k) => {
      let query = k
        .selectFrom('registry_entities')
        .selectAll()
        .where('kind', '=', q.kind)
        .where('namespace', 'in', [...q.namespaces]);
      if (q.type !== undefined) query = query.where('type_field', '=', q.type);
      return query.orderBy('name').execute();
    });
    return rows.map(toEntity);
  }

  async insert(e: RegistryEntity, refs: readonly Reference[], typeField: string | null): Promise<void> {
    try {
      await this.db.transaction(async (tx) => {
        await tx.insertInto('registry_entities').values(toRow(e, typeField)).execute();
        await insertRefs(tx, e, refs);
      });
    } catch (err) {
      if (this.db.isConstraint(err, 'unique')) {
        throw new AppError('ALREADY_EXISTS', `A ${e.kind} named ${e.name} already exists`, {
          details: { entity: e.kind, name: e.name },
        });
      }
      throw err;
    }
  }

  async replace(
    e: RegistryEntity,
    expectedRevision: number,
    refs: readonly Reference[],
    typeField: string | null,
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const res = await tx
        .updateTable('registry_entities')
        .set({ ...toRow(e, typeField) })
        .where('kind', '=', e.kind)
        .where('name', '=', e.name)
        .where('revision', '=', expectedRevision)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
      await tx.deleteFrom('registry_refs').where('from_kind', '=', e.kind).where('from_name', '=', e.name).execute();
      await insertRefs(tx, e, refs);
      return true;
    });
  }

  async delete(kind: RegistryKind, name: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.deleteFrom('registry_refs').where('from_kind', '=', kind).where('from_name', '=', name).execute();
      const res = await tx
        .deleteFrom('registry_entities')
        .where('kind', '=', kind)
        .where('name', '=', name)
        .executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    });
  }

  async referrers(kind: RegistryKind, name: string): Promise<Referrer[]> {
    const rows = await this.db.run((k) =>
      k
        .selectFrom('registry_refs')
        .select(['from_kind', 'from_name'])
        .where('to_kind', '=', kind)
        .where('to_name', '=', name)
        .orderBy('from_kind')
        .orderBy('from_name')
        .execute(),
    );
    return rows.map((r) => ({ kind: r.from_kind as RegistryKind, name: r.from_name }));
  }

  async countByNamespace(namespace: string): Promise<Partial<Record<RegistryKind, number>>> {
    const rows = await this.db.run((k) =>
      k
        .selectFrom('registry_entities')
        .select((eb) => ['kind', eb.fn.countAll<number>().as('n')])
        .where('namespace', '=', namespace)
        .groupBy('kind')
        .execute(),
    );
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
  }
}

/** Namespaces and memberships. */
export class NamespaceStore implements NamespaceRepository {
  private readonly db: SqlRunner;

  constructor(db: SqlRunner) {
    this.db = db;
  }

  async forPrincipal(principal: string): Promise<Array<NamespaceRecord & { role: Role }>> {
    const rows = await this.db.run((k) =>
      k
        .selectFrom('namespace_members as m')
        .innerJoin('namespaces as n', 'n.name', 'm.namespace')
        .select(['n.name', 'n.owner', 'n.created_at', 'm.role'])
        .where('m.principal', '=', principal)
        .orderBy('n.name')
        .execute(),
    );
    return rows.map((r) => ({ name: r.name, owner: r.owner, createdAt: r.created_at, role: r.role as Role }));
  }

  async get(name: string): Promise<NamespaceRecord | undefined> {
    const r = await this.db.run((k) =>
      k.selectFrom('namespaces').selectAll().where('name', '=', name).executeTakeFirst(),
    );
    return r && { name: r.name, owner: r.owner, createdAt: r.created_at };
  }

  async members(name: string): Promise<Member[]> {
    const rows = await this.db.run((k) =>
      k.selectFrom('namespace_members').selectAll().where('namespace', '=', name).orderBy('principal').execute(),
    );
    return rows.map((r) => ({ principal: r.principal, role: r.role as Role, addedAt: r.added_at }));
  }

  async roleOf(name: string, principal: string): Promise<Role | undefined> {
    const r = await this.db.run((k) =>
      k
        .selectFrom('namespace_members')
        .select('role')
        .where('namespace', '=', name)
        .where('principal', '=', principal)
        .executeTakeFirst(),
    );
    return r?.role as Role | undefined;
  }

  async create(name: string, owner: string, at: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const res = await tx
        .insertInto('namespaces')
        .values({ name, owner, created_at: at })
        .onConflict((oc) => oc.column('name').doNothing())
        .executeTakeFirst();
      if (Number(res.numInsertedOrUpdatedRows ?? 0) !== 1) return false;
      await tx
        .insertInto('namespace_members')
        .values({ namespace: name, principal: owner, role: 'owner', added_at: at })
        .execute();
      return true;
    });
  }

  async setMember(name: string, principal: string, role: Role, at: string): Promise<void> {
    await this.db.run((k) =>
      k
        .insertInto('namespace_members')
        .values({ namespace: name, principal, role, added_at: at })
        .onConflict((oc) => oc.columns(['namespace', 'principal']).doUpdateSet({ role }))
        .execute(),
    );
  }

  async removeMember(name: string, principal: string): Promise<boolean> {
    const res = await this.db.run((k) =>
      k
        .deleteFrom('namespace_members')
        .where('namespace', '=', name)
        .where('principal', '=', principal)
        .executeTakeFirst(),
    );
    return Number(res.numDeletedRows) > 0;
  }

  async contents(name: string): Promise<NamespaceContents> {
    return this.db.run((k) => countContents(k, name));
  }

  async defaultFor(name: string): Promise<string[]> {
    const rows = await this.db.run((k) =>
      k.selectFrom('users').select('name').where('default_namespace', '=', name).orderBy('name').execute(),
    );
    return rows.map((r) => r.name);
  }

  async purge(name: string): Promise<NamespaceContents> {
    return this.db.transaction(async (tx) => {
      // On PostgreSQL, concurrent purges (and member changes) of one namespace queue on its row.
      if (this.db.engine === 'postgresql')
        await tx.selectFrom('namespaces').select('name').where('name', '=', name).forUpdate().execute();
      const counted = await countContents(tx, name);
      // Tasks take their events, push configs, outbox rows, idempotency keys and transcripts
      // with them; plans their records; the namespace its memberships (foreign keys cascade).
      await tx
        .deleteFrom('registry_refs')
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('registry_entities as e')
              .select('e.name')
              .whereRef('e.kind', '=', 'registry_refs.from_kind')
              .whereRef('e.name', '=', 'registry_refs.from_name')
              .where('e.namespace', '=', name),
          ),
        )
        .execute();
      await tx.deleteFrom('registry_entities').where('namespace', '=', name).execute();
      await tx.deleteFrom('tasks').where('owner', '=', name).execute();
      await tx.deleteFrom('task_counts').where('owner', '=', name).execute();
      await tx.deleteFrom('message_keys').where('owner', '=', name).execute();
      await tx.deleteFrom('sessions').where('owner', '=', name).execute();
      await tx.deleteFrom('plans').where('owner', '=', name).execute();
      await tx.deleteFrom('namespace_members').where('namespace', '=', name).execute();
      await tx.deleteFrom('namespaces').where('name', '=', name).execute();
      return counted;
    });
  }
}

async function countContents(q: Kysely<DB>, name: string): Promise<NamespaceContents> {
  const count = async (
    table: 'registry_entities' | 'sessions' | 'tasks' | 'plans',
    column: 'namespace' | 'owner',
  ): Promise<number> => {
    const r = await q
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(column, '=', name)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  };
  return {
    entities: await count('registry_entities', 'namespace'),
    sessions: await count('sessions', 'owner'),
    tasks: await count('tasks', 'owner'),
    plans: await count('plans', 'owner'),
  };
}

async function insertRefs(tx: Kysely<DB>, e: RegistryEntity, refs: readonly Reference[]): Promise<void> {
  const unique = new Map(refs.map((r) => [`${r.kind}\u0000${r.name}`, r]));
  if (unique.size === 0) return;
  await tx
    .insertInto('registry_refs')
    .values(
      [...unique.values()].map((r) => ({ from_kind: e.kind, from_name: e.name, to_kind: r.kind, to_name: r.name })),
    )
    .execute();
}

function toRow(e: RegistryEntity, typeField: string | null): RegistryEntitiesTable {
  return {
    kind: e.kind,
    name: e.name,
    namespace: e.namespace,
    type_field: typeField,
    revision: e.revision,
    content_hash: e.contentHash,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    definition: JSON.stringify(e.definition),
  };
}

function toEntity(r: RegistryEntitiesTable): RegistryEntity {
  return {
    kind: r.kind as RegistryKind,
    name: r.name,
    namespace: r.namespace,
    revision: Number(r.revision),
    contentHash: r.content_hash,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    builtin: false,
    definition: JSON.parse(r.definition) as Definition,
  };
}

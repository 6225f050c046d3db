/**
 * In-memory fakes of the registry's ports, for unit tests without a database: the registry rows,
 * a namespace directory where only `local` exists (owned by the local user), and a resource
 * inspector that sees every path as a git work tree on `main`.
 */
import { resolveAsGiven } from '../capabilities.ts';
import type {
  Member,
  NamespaceRecord,
  NamespaceRepository,
  PathFacts,
  Referrer,
  RegistryListQuery,
  RegistryRepository,
  ResourceInspector,
  Role,
} from '../../../src/application/index.ts';
import type { Reference, RegistryEntity, RegistryKind } from '../../../src/domain/registry/entities.ts';

/** Registry rows in a map, with their references (for `referrers`). */
export class MemoryRegistry implements RegistryRepository {
  readonly rows = new Map<string, { entity: RegistryEntity; refs: readonly Reference[] }>();
  private key = (kind: RegistryKind, name: string): string => `${kind}:${name}`;

  get(kind: RegistryKind, name: string): Promise<RegistryEntity | undefined> {
    return Promise.resolve(this.rows.get(this.key(kind, name))?.entity);
  }
  list(q: RegistryListQuery): Promise<RegistryEntity[]> {
    const all = [...this.rows.values()].map((r) => r.entity);
    return Promise.resolve(all.filter((e) => e.kind === q.kind && q.namespaces.includes(e.namespace)));
  }
  insert(entity: RegistryEntity, refs: readonly Reference[]): Promise<void> {
    this.rows.set(this.key(entity.kind, entity.name), { entity, refs });
    return Promise.resolve();
  }
  replace(entity: RegistryEntity, expectedRevision: number, refs: readonly Reference[]): Promise<boolean> {
    const k = this.key(entity.kind, entity.name);
    if (this.rows.get(k)?.entity.revision !== expectedRevision) return Promise.resolve(false);
    this.rows.set(k, { entity, refs });
    return Promise.resolve(true);
  }
  delete(kind: RegistryKind, name: string): Promise<boolean> {
    return Promise.resolve(this.rows.delete(this.key(kind, name)));
  }
  referrers(kind: RegistryKind, name: string): Promise<Referrer[]> {
    return Promise.resolve(
      [...this.rows.values()]
        .filter((r) => r.refs.some((ref) => ref.kind === kind && ref.name === name))
        .map((r) => ({ kind: r.entity.kind, name: r.entity.name })),
    );
  }
  countByNamespace(): Promise<Partial<Record<RegistryKind, number>>> {
    return Promise.resolve({});
  }
}

const LOCAL: NamespaceRecord = { name: 'local', owner: 'local', createdAt: '2026-01-01T00:00:00.000Z' };
const OWNER: Role = 'owner';
const notHere = (): Promise<never> => Promise.reject(new Error('not in this fake'));

/** Only `local` exists, owned by the local user; changing namespaces is not part of this fake. */
export const localOnlyNamespaces: NamespaceRepository = {
  forPrincipal: (id) => Promise.resolve(id === 'local' ? [{ ...LOCAL, role: OWNER }] : []),
  get: (name) => Promise.resolve(name === 'local' ? LOCAL : undefined),
  members: (): Promise<Member[]> => Promise.resolve([]),
  roleOf: (name, id) => Promise.resolve(name === 'local' && id === 'local' ? OWNER : undefined),
  create: notHere,
  setMember: notHere,
  removeMember: notHere,
  contents: notHere,
  defaultFor: notHere,
  purge: notHere,
};

/** Every path is a git work tree on `main` (a branch exists only when it is `main`). */
export const gitTreeInspector: ResourceInspector = {
  resolve: resolveAsGiven,
  inspect: (_path, branch): Promise<PathFacts> =>
    Promise.resolve({
      exists: true,
      isDirectory: true,
      gitWorkTree: true,
      currentBranch: 'main',
      ...(branch !== undefined ? { branchExists: branch === 'main' } : {}),
    }),
};

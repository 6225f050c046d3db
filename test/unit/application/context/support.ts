/**
 * A real RegistryService over an in-memory repository (the `local` namespace readable by the
 * local user, `team` by nobody), with one git-checkout resource and one project on it.
 */
import { localCapabilities, resolveAsGiven } from '../../../support/capabilities.ts';
import type {
  Member,
  NamespaceRecord,
  NamespaceRepository,
  Referrer,
  RegistryListQuery,
  RegistryRepository,
  ResourceInspector,
  Role,
} from '../../../../src/application/index.ts';
import { LOCAL_PRINCIPAL, type FileInventory } from '../../../../src/application/index.ts';
import { NamespaceService } from '../../../../src/application/registry/namespace.service.ts';
import { RegistryService } from '../../../../src/application/registry/registry.service.ts';
import type { Reference, RegistryEntity, RegistryKind } from '../../../../src/domain/registry/entities.ts';

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
  referrers(): Promise<Referrer[]> {
    return Promise.resolve([]);
  }
  countByNamespace(): Promise<Partial<Record<RegistryKind, number>>> {
    return Promise.resolve({});
  }
}

const LOCAL: NamespaceRecord = { name: 'local', owner: 'local', createdAt: '2026-01-01T00:00:00.000Z' };
const OWNER: Role = 'owner';
const namespaces: NamespaceRepository = {
  forPrincipal: (id) => Promise.resolve(id === 'local' ? [{ ...LOCAL, role: OWNER }] : []),
  get: (name) => Promise.resolve(name === 'local' ? LOCAL : undefined),
  members: (): Promise<Member[]> => Promise.resolve([]),
  roleOf: (name, id) => Promise.resolve(name === 'local' && id === 'local' ? OWNER : undefined),
  create: () => Promise.reject(new Error('not in this fake')),
  setMember: () => Promise.reject(new Error('not in this fake')),
  removeMember: () => Promise.reject(new Error('not in this fake')),
  contents: () => Promise.reject(new Error('not in this fake')),
  defaultFor: () => Promise.reject(new Error('not in this fake')),
  purge: () => Promise.reject(new Error('not in this fake')),
};
const inspector: ResourceInspector = {
  resolve: resolveAsGiven,
  inspect: () => Promise.resolve({ exists: true, isDirectory: true, gitWorkTree: true, currentBranch: 'main' }),
};

/** The registry, with resource local/api at `repo` and project local/api (with `context` settings) on it. */
export async function registryWith(
  repo: string,
  context?: Record<string, unknown>,
): Promise<{ registry: RegistryService; repo: MemoryRegistry }> {
  const store = new MemoryRegistry();
  const registry = new RegistryService({
    repo: store,
    namespaces: new NamespaceService(namespaces, store, () => ({})),
    inspector,
    capabilities: localCapabilities(inspector),
    builtins: {},
    builtinModels: [],
  });
  await registry.add(
    'resource',
    { definition: { name: 'local/api', type: 'git-checkout', path: repo } },
    LOCAL_PRINCIPAL,
  );
  await registry.add(
    'project',
    {
      definition: {
        name: 'local/api',
        resources: ['local/api'],
        ...(context ? { settings: { context } } : {}),
      },
    },
    LOCAL_PRINCIPAL,
  );
  const at = '2026-01-01T00:00:00.000Z';
  await store.insert(
    {
      kind: 'project',
      name: 'team/secret',
      namespace: 'team',
      revision: 1,
      contentHash: 'h',
      createdAt: at,
      updatedAt: at,
      builtin: false,
      definition: { name: 'team/secret', resources: ['local/api'] },
    },
    [],
  );
  return { registry, repo: store };
}

/** Tokens = whitespace-separated words: exact, and easy to count by hand in the tests. */
export const wordTokens = {
  count: (t: string): Promise<number> => Promise.resolve((t.match(/\S+/g) ?? []).length),
};

/** A real inventory that records the path of every file it reads. */
export function recordingInventory(real: FileInventory, reads: string[]): FileInventory {
  return {
    list: (r, sig) => real.list(r, sig),
    restat: (r, p) => real.restat(r, p),
    recency: (r) => real.recency(r),
    globFilter: (i, e) => real.globFilter(i, e),
    read: (r, p, m) => {
      reads.push(p);
      return real.read(r, p, m);
    },
  };
}

/**
 * A real RegistryService over an in-memory repository (the `local` namespace readable by the
 * local user, `team` by nobody), with one git-checkout resource and one project on it.
 */
import { localCapabilities } from '../../../support/capabilities.ts';
import {
  gitTreeInspector as inspector,
  localOnlyNamespaces as namespaces,
  MemoryRegistry,
} from '../../../support/fakes/registry.ts';

export { MemoryRegistry };
import { LOCAL_PRINCIPAL, type FileInventory } from '../../../../src/application/index.ts';
import { NamespaceService } from '../../../../src/application/registry/namespace.service.ts';
import { RegistryService } from '../../../../src/application/registry/registry.service.ts';

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

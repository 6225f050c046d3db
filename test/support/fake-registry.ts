/**
 * A registry of plain definitions for unit tests: `'<kind>:<name>'` → definition, looked up as a
 * local-mode registry does (nothing needs a capability, so using is looking up).
 */
import type { EntityOf, RegistryService } from '../../src/application/registry/registry.service.ts';
import type { RegistryKind } from '../../src/domain/registry/entities.ts';

export function fakeRegistry(definitions: Readonly<Record<string, unknown>>): Pick<RegistryService, 'lookup' | 'use'> {
  const lookup = <K extends RegistryKind>(kind: K, name: string): Promise<EntityOf<K> | undefined> => {
    const definition = definitions[`${kind}:${name}`];
    // The test wrote each definition under its kind: it is that kind's.
    const entity = {
      kind,
      name,
      namespace: 'local',
      revision: 1,
      contentHash: '',
      createdAt: '',
      updatedAt: '',
      builtin: false,
      definition,
    } as EntityOf<K>;
    return Promise.resolve(definition === undefined ? undefined : entity);
  };
  return { lookup, use: lookup };
}

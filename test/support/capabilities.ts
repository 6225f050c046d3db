/** The capability service of local mode (every capability held) over a test's inspector. */
import { CapabilityService } from '../../src/application/index.ts';
import type { ResourceInspector } from '../../src/application/index.ts';

export function localCapabilities(inspector: ResourceInspector): CapabilityService {
  return new CapabilityService({
    grants: { list: async () => [], put: async () => false, remove: async () => false },
    inspector,
    settings: { mode: 'local' },
    namespaceExists: async () => true,
  });
}

/** An inspector's `resolve` for fakes that say every path is a directory: the path as given. */
export const resolveAsGiven: ResourceInspector['resolve'] = (given) =>
  Promise.resolve(given.startsWith('/') ? { real: given, stored: given } : undefined);

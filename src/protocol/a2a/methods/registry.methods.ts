import type { z } from 'zod';
import { REGISTRY_KINDS, type RegistryKind } from '../../../domain/registry/entities.ts';
import * as c from '../contracts/registry.contract.ts';
import type { UnaryContract } from '../contract.ts';
import { bindFamily, type MethodDef } from '../method.ts';

/**
 * One registry's five rows with their results seen as any zod type: TypeScript cannot relate the
 * service's per-kind types to a schema picked by a generic K. They are checked per kind instead,
 * at compile time and at run time, in test/unit/protocol/a2a/contracts/registry.contract.test.ts
 * (and every result by the dispatcher's result check in tests).
 */
type AnyKindRegistry = { [M in keyof c.RegistryContracts]: UnaryContract<c.RegistryContracts[M]['params'], z.ZodType> };

/** One registry's family bound to the registry service. */
function registryRows<K extends RegistryKind>(kind: K): readonly MethodDef[] {
  const rows: AnyKindRegistry = c.REGISTRIES[kind];
  return bindFamily(rows, {
    // What answers show is redacted for the caller (application/registry/registry-reveal.ts).
    list: async (f, p, ctx) => {
      const r = await f.registry.list(kind, p, ctx.principal);
      return { ...r, items: await f.registry.shownTo(r.items, ctx.principal, p.reveal) };
    },
    show: async (f, p, ctx) =>
      only(await f.registry.shownTo([await f.registry.show(kind, p.name, ctx.principal)], ctx.principal, p.reveal)),
    add: async (f, p, ctx) =>
      only(await f.registry.shownTo([await f.registry.add(kind, p, ctx.principal)], ctx.principal)),
    update: async (f, p, ctx) =>
      only(
        await f.registry.shownTo(
          [await f.registry.update(kind, p.name, p, p.expectedRevision, ctx.principal)],
          ctx.principal,
        ),
      ),
    remove: (f, p, ctx) => f.registry.remove(kind, p.name, p.force ?? false, ctx.principal),
  });
}

/** The one entry of a one-entry list. */
function only<E>(entries: readonly E[]): E {
  const [e] = entries;
  if (e === undefined) throw new Error('no entry to show');
  return e;
}

/** Every registry's family (the contracts, for clients too, are in contracts/registry.contract.ts). */
export const REGISTRY_ROWS: readonly MethodDef[] = REGISTRY_KINDS.flatMap((kind) => registryRows(kind));

/** The resource types' family, answered from the contract's own table. */
export const RESOURCE_TYPE_ROWS = bindFamily(c.RESOURCE_TYPE_METHODS, {
  resourceTypeList: () =>
    Promise.resolve({ types: c.RESOURCE_TYPE_INFO.map((t) => ({ ...t, fields: [...t.fields] })) }),
  resourceTypeShow: (_f, p) => {
    const t = c.RESOURCE_TYPE_INFO.find((x) => x.type === p.type) ?? c.RESOURCE_TYPE_INFO[0];
    return Promise.resolve({ ...t, fields: [...t.fields] });
  },
});

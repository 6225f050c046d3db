import type { z } from 'zod';
import { REGISTRY_KINDS, type RegistryKind } from '../../../domain/registry/entities.ts';
import * as c from '../contracts/registry.contract.ts';
import type { UnaryContract } from '../contract.ts';
import { bindUnary, type MethodDef, type UnaryMethod } from '../method.ts';

/**
 * Binds a row picked by a generic kind with its result seen as any zod type: TypeScript cannot
 * relate the service's per-kind types to a schema picked by a generic K. They are checked per
 * kind instead, at compile time and at run time, in test/unit/protocol/a2a/contracts/registry.contract.test.ts
 * (and every result by the dispatcher's result check in tests).
 */
const serve = <P extends z.ZodType>(
  row: UnaryContract<P, z.ZodType>,
  call: UnaryMethod<P, z.ZodType>['call'],
): MethodDef => bindUnary(row, call);

/** One registry's five contracts, bound to the registry service. */
function registryMethods<K extends RegistryKind>(kind: K): MethodDef[] {
  const rows = c.REGISTRIES[kind];
  return [
    serve(rows.list, (f, p, ctx) => f.registry.list(kind, p, ctx.principal)),
    serve(rows.show, (f, p, ctx) => f.registry.show(kind, p.name, ctx.principal)),
    serve(rows.add, (f, p, ctx) => f.registry.add(kind, p, ctx.principal)),
    serve(rows.update, (f, p, ctx) => f.registry.update(kind, p.name, p, p.expectedRevision, ctx.principal)),
    serve(rows.remove, (f, p, ctx) => f.registry.remove(kind, p.name, p.force ?? false, ctx.principal)),
  ];
}

/** The six registries' rows. */
export const REGISTRY_METHODS: MethodDef[] = REGISTRY_KINDS.flatMap((kind) => registryMethods(kind));

export const resourceTypeList = bindUnary(c.resourceTypeList, () =>
  Promise.resolve({ types: c.RESOURCE_TYPE_INFO.map((t) => ({ ...t, fields: [...t.fields] })) }),
);

export const resourceTypeShow = bindUnary(c.resourceTypeShow, (_f, p) => {
  const t = c.RESOURCE_TYPE_INFO.find((x) => x.type === p.type) ?? c.RESOURCE_TYPE_INFO[0];
  return Promise.resolve({ ...t, fields: [...t.fields] });
});

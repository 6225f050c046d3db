import { REGISTRY_KINDS, type RegistryKind } from '../../../domain/registry/entities.js';
import * as c from '../contracts/registry.contract.js';
import { bindUnary, type MethodDef, type UnaryMethod } from '../method.js';

type Bound<C> = C extends {
  kind: 'unary';
  params: infer P extends import('zod').ZodType;
  result: infer R extends import('zod').ZodType;
}
  ? UnaryMethod<P, R>
  : never;
/** One registry's five contracts, bound to the registry service. */
export type RegistryMethods = { [K in keyof c.RegistryContracts]: Bound<c.RegistryContracts[K]> };

function registryMethods(kind: RegistryKind): RegistryMethods {
  const rows = c.REGISTRIES[kind];
  return {
    list: bindUnary(rows.list, (f, p, ctx) => f.registry.list(kind, p, ctx.principal)),
    show: bindUnary(rows.show, (f, p, ctx) => f.registry.show(kind, p.name, ctx.principal)),
    add: bindUnary(rows.add, (f, p, ctx) => f.registry.add(kind, p, ctx.principal)),
    update: bindUnary(rows.update, (f, p, ctx) =>
      f.registry.update(kind, p.name, p, p.expectedRevision, ctx.principal),
    ),
    remove: bindUnary(rows.remove, (f, p, ctx) => f.registry.remove(kind, p.name, p.force ?? false, ctx.principal)),
  };
}

/** The six registries' rows. */
export const REGISTRY_METHODS: MethodDef[] = REGISTRY_KINDS.flatMap((kind) => Object.values(registryMethods(kind)));

export const resourceTypeList = bindUnary(c.resourceTypeList, () =>
  Promise.resolve({ types: c.RESOURCE_TYPE_INFO.map((t) => ({ ...t, fields: [...t.fields] })) }),
);

export const resourceTypeShow = bindUnary(c.resourceTypeShow, (_f, p) => {
  const t = c.RESOURCE_TYPE_INFO.find((x) => x.type === p.type) ?? c.RESOURCE_TYPE_INFO[0];
  return Promise.resolve({ ...t, fields: [...t.fields] });
});

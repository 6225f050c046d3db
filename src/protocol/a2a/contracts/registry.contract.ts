import { z } from 'zod';
import { DERIVED_FACT_SCHEMAS, Referrer } from '../../../domain/registry/derived-facts.ts';
import { DEFINITION_SCHEMAS, PLURAL, REGISTRY_KINDS, type RegistryKind } from '../../../domain/registry/entities.ts';
import { RESOURCE_TYPES } from '../../../domain/registry/resource.definition.ts';
import { EntityName, NamespaceName } from '../../../domain/registry/names.ts';
import { defineContract, type ContractFamily, type UnaryContract } from '../contract.ts';

const SourceInput = z
  .object({
    text: z.string().max(1024 * 1024, 'is at most 1 MiB'),
    filename: z.string().max(255).optional(),
    baseDir: z.string().max(4096).optional(),
  })
  .strict();

/** A definition as an object, or as the text of a YAML/JSON file (for located errors). */
const DefinitionFields = {
  definition: z.record(z.string(), z.unknown()).optional(),
  source: SourceInput.optional(),
};
const exactlyOne = (p: { definition?: unknown; source?: unknown }): boolean =>
  (p.definition === undefined) !== (p.source === undefined);
const ONE_MSG = { message: 'give exactly one of definition or source', path: ['definition'] };

/**
 * Show credential values (env and header values, a URL's userinfo and query values) of the entries
 * in namespaces the caller may write; hidden otherwise, and always for the rest (since 1.5).
 */
const Reveal = z.boolean().optional();

export const RegistryListParams = z
  .object({
    namespace: NamespaceName.optional(),
    nameRegex: z.string().max(200, 'is at most 200 characters').optional(),
    type: z.string().max(100).optional(),
    pageSize: z.number().int().min(1, 'must be between 1 and 500').max(500, 'must be between 1 and 500').optional(),
    pageToken: z.string().max(400).optional(),
    reveal: Reveal,
  })
  .strict();

const ListSummary = z.object({
  byNamespace: z.record(z.string(), z.number()),
  byType: z.record(z.string(), z.number()),
});

export const RegistryRemoveResult = z.object({
  removed: z.literal(true),
  kind: z.enum(REGISTRY_KINDS),
  name: z.string(),
  danglingReferrers: z.array(Referrer),
});

/**
 * One kind's result schemas: the stored entity with that kind's definition schema (what `add`
 * returns), a page of them (`list`), the entity with that kind's derived facts (`show`), and
 * `update`'s.
 */
function resultSchemas<K extends RegistryKind>(kind: K) {
  const entity = z.object({
    kind: z.literal(kind),
    name: z.string(),
    namespace: z.string(),
    revision: z.number().int().positive(),
    contentHash: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
    builtin: z.boolean(),
    definition: DEFINITION_SCHEMAS[kind],
  });
  return {
    entity,
    list: z.object({
      items: z.array(entity),
      nextPageToken: z.string(),
      totalSize: z.number().int(),
      summary: ListSummary,
    }),
    show: entity.extend({ derived: DERIVED_FACT_SCHEMAS[kind] }),
    update: entity.extend({ unchanged: z.boolean() }),
  };
}

/** Each kind's result schemas, written out per kind so that each keeps its own types. */
export const REGISTRY_RESULTS = {
  actor: resultSchemas('actor'),
  tool: resultSchemas('tool'),
  skill: resultSchemas('skill'),
  resource: resultSchemas('resource'),
  project: resultSchemas('project'),
  action: resultSchemas('action'),
  'automation-profile': resultSchemas('automation-profile'),
  hook: resultSchemas('hook'),
} satisfies { [K in RegistryKind]: ReturnType<typeof resultSchemas<K>> };
type Results = typeof REGISTRY_RESULTS;
/**
 * Kind K's result schema for one method. (`& z.ZodType` changes nothing for a known kind; for a
 * generic K it tells TypeScript that the schema picked is a zod type, which it cannot see on its
 * own, so that generic code such as the CLI's registry group keeps K's types through a call.)
 */
type ResultSchema<K extends RegistryKind, M extends keyof Results[RegistryKind]> = Results[K][M] & z.ZodType;

/** A stored entity of kind K, as `add` and `list` return it. */
export type RegistryEntityOf<K extends RegistryKind> = z.output<ResultSchema<K, 'entity'>>;
/** One page of kind K's `list`. */
export type RegistryPageOf<K extends RegistryKind> = z.output<ResultSchema<K, 'list'>>;
/** What kind K's `show` returns: the entity and its derived facts. */
export type RegistryShownOf<K extends RegistryKind> = z.output<ResultSchema<K, 'show'>>;

const AddParams = z.object(DefinitionFields).strict().refine(exactlyOne, ONE_MSG);
const UpdateParams = z
  .object({ name: EntityName, expectedRevision: z.number().int().positive().optional(), ...DefinitionFields })
  .strict()
  .refine(exactlyOne, ONE_MSG);
/** Show, update and remove act in the namespace of the entity they name. */
const BY_NAME = { param: 'name', form: 'entity' } as const;
const ShowParams = z.object({ name: EntityName, reveal: Reveal }).strict();
const RemoveParams = z.object({ name: EntityName, force: z.boolean().optional() }).strict();

/** The five rows of kind K's registry, typed with K's definition and derived facts. */
// A type, not an interface, so that one registry's rows are a ContractFamily (an interface has no index signature).
export type RegistryContracts<K extends RegistryKind = RegistryKind> = {
  list: UnaryContract<typeof RegistryListParams, ResultSchema<K, 'list'>>;
  show: UnaryContract<typeof ShowParams, ResultSchema<K, 'show'>>;
  add: UnaryContract<typeof AddParams, ResultSchema<K, 'entity'>>;
  update: UnaryContract<typeof UpdateParams, ResultSchema<K, 'update'>>;
  remove: UnaryContract<typeof RemoveParams, typeof RegistryRemoveResult>;
};

/** The five rows of one registry: `_cleveragents/registry/<plural>/{list,show,add,update,remove}`. */
function registryContracts<K extends RegistryKind>(kind: K): RegistryContracts<K> {
  const results = REGISTRY_RESULTS[kind];
  const base = `_cleveragents/registry/${PLURAL[kind]}`;
  // Automation profiles became a registry in extension version 1.1, with the plan methods.
  // Hooks became one in 1.4 (issue #17).
  const since =
    kind === 'automation-profile' ? ({ since: '1.1' } as const) : kind === 'hook' ? ({ since: '1.4' } as const) : {};
  const typeNote =
    kind === 'resource'
      ? ' (`type` filters on the resource type)'
      : kind === 'tool'
        ? ' (`type` filters on the source)'
        : kind === 'actor'
          ? ' (`type` filters on the provider)'
          : kind === 'hook'
            ? ' (`type` filters on the event)'
            : '';
  return {
    list: defineContract({
      name: `${base}/list`,
      ...since,
      surface: 'extension',
      summary: `List ${PLURAL[kind]}: filter by namespace, a name regular expression${typeNote}; paged, with a summary.`,
      permission: 'registry:read',
      scope: 'any',
      params: RegistryListParams,
      result: results.list,
    }),
    show: defineContract({
      name: `${base}/show`,
      ...since,
      surface: 'extension',
      summary: `Show one ${kind}: its definition, revision, hash and derived facts.`,
      permission: 'registry:read',
      scope: BY_NAME,
      params: ShowParams,
      result: results.show,
    }),
    add: defineContract({
      name: `${base}/add`,
      ...since,
      surface: 'extension',
      summary: `Register a ${kind} from a definition (object, or YAML/JSON text for errors with file and line).`,
      permission: 'registry:write',
      scope: 'any',
      params: AddParams,
      result: results.entity,
    }),
    update: defineContract({
      name: `${base}/update`,
      ...since,
      surface: 'extension',
      summary: `Replace a ${kind}'s definition; refuses a stale expectedRevision.`,
      permission: 'registry:write',
      scope: BY_NAME,
      params: UpdateParams,
      result: results.update,
    }),
    remove: defineContract({
      name: `${base}/remove`,
      ...since,
      surface: 'extension',
      summary: `Remove a ${kind}; refuses one that others refer to unless force is set.`,
      permission: 'registry:write',
      scope: BY_NAME,
      params: RemoveParams,
      result: RegistryRemoveResult,
    }),
  };
}

export const actorRegistry = registryContracts('actor');
export const toolRegistry = registryContracts('tool');
export const skillRegistry = registryContracts('skill');
export const resourceRegistry = registryContracts('resource');
export const projectRegistry = registryContracts('project');
export const actionRegistry = registryContracts('action');
export const automationProfileRegistry = registryContracts('automation-profile');
export const hookRegistry = registryContracts('hook');

/** Every registry's rows by kind; `REGISTRIES[kind]` for a generic kind is `RegistryContracts<kind>`. */
export const REGISTRIES: { [K in RegistryKind]: RegistryContracts<K> } = {
  actor: actorRegistry,
  tool: toolRegistry,
  skill: skillRegistry,
  resource: resourceRegistry,
  project: projectRegistry,
  action: actionRegistry,
  'automation-profile': automationProfileRegistry,
  hook: hookRegistry,
};

/** The flags each resource type takes (what `agents resource add <type>` accepts). */
export const RESOURCE_TYPE_INFO = [
  {
    type: 'git-checkout',
    description: 'A git work tree; plans run in a worktree of it on their own branch and merge back on apply.',
    fields: [
      {
        name: 'path',
        flag: '--path',
        required: true,
        description: 'the work tree (must exist and be inside a git repository)',
      },
      {
        name: 'branch',
        flag: '--branch',
        required: false,
        description: 'the branch plans start from and merge into (must exist)',
      },
    ],
  },
  {
    type: 'fs-directory',
    description: 'A plain directory; plans run in a copy of it.',
    fields: [{ name: 'path', flag: '--path', required: true, description: 'the directory (must exist)' }],
  },
  {
    type: 'git-remote',
    description:
      'A remote git repository the server clones (through its egress rules) and fetches before each plan; apply pushes.',
    fields: [
      {
        name: 'url',
        flag: '--url',
        required: true,
        description: 'https://, http:// or git:// URL (no credentials in it)',
      },
      {
        name: 'branch',
        flag: '--branch',
        required: false,
        description: "the target branch plans start from (default: the remote's HEAD)",
      },
      {
        name: 'credentials',
        flag: '--credentials',
        required: false,
        description: 'a secret of the namespace: a token, or user:password (agents secret set NAME)',
      },
      {
        name: 'push',
        flag: '--push',
        required: false,
        description: "branch (push the plan's branch for review, the default) or target (push to the target branch)",
      },
    ],
  },
] as const satisfies ReadonlyArray<{
  type: (typeof RESOURCE_TYPES)[number];
  description: string;
  fields: ReadonlyArray<{ name: string; flag: string; required: boolean; description: string }>;
}>;

const ResourceTypeInfo = z.object({
  type: z.enum(RESOURCE_TYPES),
  description: z.string(),
  fields: z.array(z.object({ name: z.string(), flag: z.string(), required: z.boolean(), description: z.string() })),
});

export const resourceTypeList = defineContract({
  name: '_cleveragents/registry/resource-types/list',
  surface: 'extension',
  summary: 'The resource types and the fields (flags) each takes.',
  permission: 'card:read',
  params: z.object({}).strict(),
  result: z.object({ types: z.array(ResourceTypeInfo) }),
});

export const resourceTypeShow = defineContract({
  name: '_cleveragents/registry/resource-types/show',
  surface: 'extension',
  summary: 'One resource type and the fields (flags) it takes.',
  permission: 'card:read',
  params: z.object({ type: z.enum(RESOURCE_TYPES) }).strict(),
  result: ResourceTypeInfo,
});

/** The resource types' rows; with `REGISTRIES` (each kind's five rows, a family each) every row of this file. */
export const RESOURCE_TYPE_METHODS = {
  resourceTypeList,
  resourceTypeShow,
} as const satisfies ContractFamily;

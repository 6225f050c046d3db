import { z } from 'zod';
import { MAX_LIMIT } from '../../../domain/quota.ts';
import { CAPABILITIES } from '../../../domain/registry/capabilities.ts';
import { REGISTRY_KINDS } from '../../../domain/registry/entities.ts';
import { NamespaceName } from '../../../domain/registry/names.ts';
import { defineContract, type ContractFamily } from '../contract.ts';

const Role = z.enum(['owner', 'admin', 'member', 'viewer']);
const NamespaceSummary = z.object({
  name: z.string(),
  owner: z.string(),
  role: Role,
  createdAt: z.string(),
  builtin: z.boolean(),
});

export const namespaceList = defineContract({
  name: '_cleveragents/namespace/list',
  surface: 'extension',
  summary: 'The namespaces you belong to (and builtin, which everyone may read), with your role.',
  permission: 'account:self',
  params: z.object({}).strict(),
  result: z.object({ namespaces: z.array(NamespaceSummary) }),
});

export const namespaceShow = defineContract({
  name: '_cleveragents/namespace/show',
  surface: 'extension',
  summary: 'One namespace: owner, your role, member count and how many entities of each kind it holds.',
  permission: 'registry:read',
  scope: { param: 'name', form: 'namespace' },
  params: z.object({ name: NamespaceName }).strict(),
  result: NamespaceSummary.extend({
    memberCount: z.number().int(),
    entities: z.partialRecord(z.enum(REGISTRY_KINDS), z.number().int()),
  }),
});

export const namespaceMembers = defineContract({
  name: '_cleveragents/namespace/members',
  surface: 'extension',
  summary: "A namespace's members and their roles.",
  permission: 'registry:read',
  scope: { param: 'name', form: 'namespace' },
  params: z.object({ name: NamespaceName }).strict(),
  result: z.object({
    namespace: z.string(),
    members: z.array(z.object({ principal: z.string(), role: Role, addedAt: z.string() })),
  }),
});

// Namespace management came with extension version 1.3 (teams).
const ByNamespace = { param: 'namespace', form: 'namespace' } as const;
const UserName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,62}$/, 'must be a user name: lowercase letters, digits, - and _, starting with a letter');
const Contents = z.object({
  entities: z.number().int(),
  sessions: z.number().int(),
  tasks: z.number().int(),
  plans: z.number().int(),
});
const MembershipChange = z.object({
  namespace: z.string(),
  user: z.string(),
  role: Role.optional(),
  previous: Role.optional(),
});

export const namespaceCreate = defineContract({
  name: '_cleveragents/namespace/create',
  surface: 'extension',
  since: '1.3',
  summary: 'Create a namespace; you become its owner (reserved: builtin, local, system, internal, admin, root).',
  permission: 'account:self',
  params: z.object({ name: NamespaceName }).strict(),
  result: NamespaceSummary,
});

export const namespaceDelete = defineContract({
  name: '_cleveragents/namespace/delete',
  surface: 'extension',
  since: '1.3',
  summary:
    "Delete a namespace you own; one holding registry entities, sessions, tasks or plans only with force, which deletes them too (never local, a user's default namespace, or one with a running plan).",
  permission: 'namespace:delete',
  scope: { param: 'name', form: 'namespace' },
  params: z.object({ name: NamespaceName, force: z.boolean().optional() }).strict(),
  result: z.object({ name: z.string(), deleted: z.literal(true), removed: Contents }),
});

export const namespaceAddMember = defineContract({
  name: '_cleveragents/namespace/add-member',
  surface: 'extension',
  since: '1.3',
  summary: 'Add a user to a namespace with a role (only an owner grants owner).',
  permission: 'namespace:manage',
  scope: ByNamespace,
  params: z.object({ namespace: NamespaceName, user: UserName, role: Role }).strict(),
  result: MembershipChange,
});

export const namespaceRemoveMember = defineContract({
  name: '_cleveragents/namespace/remove-member',
  surface: 'extension',
  since: '1.3',
  summary: 'Remove a member from a namespace (only an owner removes an owner; never the last one).',
  permission: 'namespace:manage',
  scope: ByNamespace,
  params: z.object({ namespace: NamespaceName, user: UserName }).strict(),
  result: MembershipChange,
});

export const namespaceSetRole = defineContract({
  name: '_cleveragents/namespace/set-role',
  surface: 'extension',
  since: '1.3',
  summary: "Change a member's role (only an owner grants or takes away owner; the last owner stays one).",
  permission: 'namespace:manage',
  scope: ByNamespace,
  params: z.object({ namespace: NamespaceName, user: UserName, role: Role }).strict(),
  result: MembershipChange,
});

// Capability grants came with extension version 1.5 (trust on a server, issue #35).
const Capability = z.enum(CAPABILITIES);
const Grant = z.object({
  namespace: z.string(),
  capability: Capability,
  paths: z.array(z.string()).optional(),
  grantedBy: z.string(),
  grantedAt: z.string(),
});

export const namespaceGrants = defineContract({
  name: '_cleveragents/namespace/grants',
  surface: 'extension',
  since: '1.5',
  summary:
    "The capabilities a namespace holds: what its definitions may make the server do (run a program, open a host path, read a server secret, reach private addresses). Members see their namespace's; administrators any.",
  permission: 'account:self',
  params: z.object({ namespace: NamespaceName }).strict(),
  result: z.object({ namespace: z.string(), mode: z.enum(['local', 'server']), grants: z.array(Grant) }),
});

export const namespaceGrant = defineContract({
  name: '_cleveragents/namespace/grant',
  surface: 'extension',
  since: '1.5',
  summary:
    'Grant a namespace a capability (server administrators only; audited). host-path takes the host directories it may name (none: any).',
  permission: 'server:admin',
  params: z
    .object({
      namespace: NamespaceName,
      capability: Capability,
      paths: z.array(z.string().min(1).max(4096)).max(100).optional(),
    })
    .strict(),
  result: Grant,
});

export const namespaceRevoke = defineContract({
  name: '_cleveragents/namespace/revoke',
  surface: 'extension',
  since: '1.5',
  summary:
    'Take a capability back from a namespace (server administrators only; audited): its definitions that need it are refused at their next use.',
  permission: 'server:admin',
  params: z.object({ namespace: NamespaceName, capability: Capability }).strict(),
  result: z.object({ namespace: z.string(), capability: Capability, revoked: z.boolean() }),
});

// Per-user limits (issue #40): server-wide defaults, overridden per namespace by administrators.
/** The largest value a limit may be set to (clients check flags against it). */
export const LIMIT_MAX = MAX_LIMIT;
const LimitValue = z.number().int().min(0).max(MAX_LIMIT);
const Limits = z.object({
  requestsPerMinute: LimitValue.describe('requests per minute per user (counted by each instance); 0: no limit'),
  concurrentTurns: LimitValue.describe('turns a user may have running at once; 0: no limit'),
  tokensPerDay: LimitValue.describe("model tokens a user's turns may use per UTC day; 0: no limit"),
});
const LimitsView = z.object({
  namespace: z.string(),
  limits: Limits.describe('what applies to each user acting in the namespace'),
  defaults: Limits.describe("the server's defaults (agents serve --rate-limit-rpm …)"),
  overrides: Limits.partial().describe('what the namespace sets itself; a limit left out is the default'),
  updatedAt: z.string().optional(),
  updatedBy: z.string().optional(),
});

export const namespaceLimitsGet = defineContract({
  name: '_cleveragents/namespace/limits/get',
  surface: 'extension',
  since: '1.5',
  summary:
    "A namespace's per-user limits (requests per minute, concurrent turns, tokens per day): in force, the server's defaults and the namespace's overrides (server administrators only).",
  permission: 'server:admin',
  params: z.object({ namespace: NamespaceName }).strict(),
  result: LimitsView,
});

export const namespaceLimitsSet = defineContract({
  name: '_cleveragents/namespace/limits/set',
  surface: 'extension',
  since: '1.5',
  summary:
    "Override a namespace's per-user limits (server administrators only; audited): a number sets one (0: no limit), null returns it to the server's default, a limit left out stays as it is.",
  permission: 'server:admin',
  params: z
    .object({
      namespace: NamespaceName,
      requestsPerMinute: LimitValue.nullable().optional(),
      concurrentTurns: LimitValue.nullable().optional(),
      tokensPerDay: LimitValue.nullable().optional(),
    })
    .strict(),
  result: LimitsView,
});

/** The namespace family: every row of namespace.contract.ts, in the table's order. */
export const NAMESPACE_METHODS = {
  namespaceList,
  namespaceShow,
  namespaceMembers,
  namespaceCreate,
  namespaceDelete,
  namespaceAddMember,
  namespaceRemoveMember,
  namespaceSetRole,
  namespaceGrants,
  namespaceGrant,
  namespaceRevoke,
  namespaceLimitsGet,
  namespaceLimitsSet,
} as const satisfies ContractFamily;

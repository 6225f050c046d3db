import { z } from 'zod';
import { REGISTRY_KINDS } from '../../../domain/registry/entities.js';
import { NamespaceName } from '../../../domain/registry/names.js';
import { defineContract } from '../contract.js';

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

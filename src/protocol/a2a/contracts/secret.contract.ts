import { z } from 'zod';
import { SecretName } from '../../../domain/registry/actor.definition.ts';
import { NamespaceName } from '../../../domain/registry/names.ts';
import { MAX_SECRET_BYTES } from '../../../domain/secrets.ts';
import { defineContract, type ContractFamily } from '../contract.ts';

// A namespace's secrets (issue #35): what an actor names with apiKeySecret instead of a server
// environment variable or file. A value goes in and never comes out: no result carries it, and
// no error quotes it. Without `namespace` a method acts where the request does (its tenant, else
// the caller's own namespace).
/** The largest value a secret may hold, in UTF-8 bytes (after one trailing newline is removed). */
export const SECRET_VALUE_MAX_BYTES = MAX_SECRET_BYTES;

const ByNamespace = { param: 'namespace', form: 'namespace' } as const;
const Instant = z.string();

export const secretSet = defineContract({
  name: '_cleveragents/secret/set',
  surface: 'extension',
  since: '1.5',
  summary:
    "Set a secret of a namespace (members and above): a new one, or a new value of one. The value is sealed with the server's key and never returned; one trailing newline is removed.",
  permission: 'registry:write',
  scope: ByNamespace,
  params: z
    .object({
      namespace: NamespaceName.optional(),
      name: SecretName,
      // Characters here (at most as many as bytes); the service checks the UTF-8 size exactly.
      value: z
        .string()
        .min(1, 'is empty')
        .max(MAX_SECRET_BYTES + 2, 'is larger than 16 KiB'),
    })
    .strict(),
  result: z.object({ namespace: z.string(), name: z.string(), created: z.boolean(), updatedAt: Instant }),
});

export const secretList = defineContract({
  name: '_cleveragents/secret/list',
  surface: 'extension',
  since: '1.5',
  summary: "A namespace's secrets by name, with who created them and when (never a value).",
  permission: 'registry:read',
  scope: ByNamespace,
  params: z.object({ namespace: NamespaceName.optional() }).strict(),
  result: z.object({
    namespace: z.string(),
    secrets: z.array(z.object({ name: z.string(), createdBy: z.string(), createdAt: Instant, updatedAt: Instant })),
  }),
});

export const secretRemove = defineContract({
  name: '_cleveragents/secret/remove',
  surface: 'extension',
  since: '1.5',
  summary: 'Remove a secret of a namespace (members and above); actors naming it then have no key.',
  permission: 'registry:write',
  scope: ByNamespace,
  params: z.object({ namespace: NamespaceName.optional(), name: SecretName }).strict(),
  result: z.object({ namespace: z.string(), name: z.string(), removed: z.literal(true) }),
});

/** The secret family: every row of secret.contract.ts, in the table's order. */
export const SECRET_METHODS = {
  secretSet,
  secretList,
  secretRemove,
} as const satisfies ContractFamily;

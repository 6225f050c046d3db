import { z } from 'zod';
import { EntityName } from './names.ts';
import { Description } from './definition-fields.ts';

export const RESOURCE_TYPES = ['git-checkout', 'fs-directory'] as const;
/**
 * A resource's directory: absolute, or (on a server) relative to its namespace's workspace. Where
 * it may lie is the registry's to check (domain/registry/capabilities.ts).
 */
const ResourcePath = z
  .string()
  .min(1, 'is required')
  .max(4096, 'is at most 4096 characters')
  .refine((p) => !p.includes('\0'), 'must not contain a NUL character');
export const ResourceDefinition = z.discriminatedUnion('type', [
  z
    .object({
      name: EntityName,
      description: Description.optional(),
      type: z.literal('git-checkout'),
      path: ResourcePath,
      branch: z
        .string()
        .regex(/^[A-Za-z0-9._/-]+$/, 'must be a branch name')
        .optional(),
    })
    .strict(),
  z
    .object({
      name: EntityName,
      description: Description.optional(),
      type: z.literal('fs-directory'),
      path: ResourcePath,
    })
    .strict(),
]);
export type ResourceDefinition = z.infer<typeof ResourceDefinition>;

import { z } from 'zod';
import { SecretName } from './actor.definition.ts';
import { EntityName } from './names.ts';
import { Description } from './definition-fields.ts';
import { gitRemoteUrlProblem } from './git-remote-url.ts';

export const RESOURCE_TYPES = ['git-checkout', 'fs-directory', 'git-remote'] as const;
/**
 * A resource's directory: absolute, or (on a server) relative to its namespace's workspace. Where
 * it may lie is the registry's to check (domain/registry/capabilities.ts).
 */
const ResourcePath = z
  .string()
  .min(1, 'is required')
  .max(4096, 'is at most 4096 characters')
  .refine((p) => !p.includes('\0'), 'must not contain a NUL character');
const BranchName = z
  .string()
  .max(255, 'is at most 255 characters')
  .regex(/^[A-Za-z0-9._/-]+$/, 'must be a branch name')
  // git's own rules that matter here: no leading dash (an option), no `..`, no `.lock` component.
  .refine(
    (b) => !b.startsWith('-') && !b.includes('..') && !/(^|\/)\.|\.lock(\/|$)|\/$/.test(b),
    'must be a branch name',
  );
/** A git-remote's URL: http(s) or git:// to a named host, nothing that runs a program or reads the host (git-remote-url.ts). */
const RemoteUrl = z
  .string()
  .min(1, 'is required')
  .max(2048, 'is at most 2048 characters')
  .superRefine((url, ctx) => {
    const problem = gitRemoteUrlProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
/** How a plan's apply reaches a git-remote: its own branch pushed for review, or the target branch itself. */
export const REMOTE_PUSH_MODES = ['branch', 'target'] as const;
export const ResourceDefinition = z.discriminatedUnion('type', [
  z
    .object({
      name: EntityName,
      description: Description.optional(),
      type: z.literal('git-checkout'),
      path: ResourcePath,
      branch: BranchName.optional(),
    })
    .strict(),
  z
    .object({
      name: EntityName,
      description: Description.optional(),
      type: z.literal('git-remote'),
      url: RemoteUrl,
      /** The target branch: plans start from its tip and `push: target` pushes to it (default: the remote's HEAD). */
      branch: BranchName.optional(),
      /** The name of a secret of the resource's namespace: a token (HTTP basic password) or `user:password`. */
      credentials: SecretName.optional(),
      push: z.enum(REMOTE_PUSH_MODES).optional(),
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

/** A resource that is a directory on the host (a git-remote is the server's own clone). */
export type LocalResource = Exclude<ResourceDefinition, { type: 'git-remote' }>;
export type GitRemoteResource = Extract<ResourceDefinition, { type: 'git-remote' }>;

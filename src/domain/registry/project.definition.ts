import { z } from 'zod';
import { EntityName } from './names.ts';
import { Description, Invariant, Ref } from './definition-fields.ts';
import { ProjectContextSettings } from '../context/context.ts';

/** The built-in profiles' short names: `manual` means `builtin/manual` wherever a profile is named. */
export const BUILTIN_PROFILE_NAMES = ['manual', 'trusted', 'auto'] as const;
/** A profile named in a project or a plan: a built-in's short name, or namespace/name (bare: local/). */
export const ProfileRef = z.union([z.enum(BUILTIN_PROFILE_NAMES), EntityName]);

/** The automation profile entity a reference names (`manual` → `builtin/manual`). */
export function profileEntityName(ref: string): string {
  return (BUILTIN_PROFILE_NAMES as readonly string[]).includes(ref) ? `builtin/${ref}` : ref;
}

/** A command run in a plan's sandbox at the end of execute: exit 0 means the definition of done is met. */
export const VerifyCommand = z
  .object({
    /** A command line, split like a shell would (never run by one): `npm test`. */
    command: z.string().trim().min(1, 'must not be empty').max(2000),
    timeoutSeconds: z.number().int().min(1).max(3600).optional(),
  })
  .strict();
export type VerifyCommand = z.infer<typeof VerifyCommand>;

export const ProjectDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    resources: z.array(Ref).min(1, 'a project needs at least one resource'),
    settings: z
      .object({
        strategyActor: Ref.optional(),
        executionActor: Ref.optional(),
        automationProfile: ProfileRef.optional(),
        /** Whether the plan's commands may reach the network (overrides the action's choice). */
        network: z.enum(['none', 'allow']).optional(),
        /** What its plans' and chats' actors see (domain/context/context.ts). */
        context: ProjectContextSettings.optional(),
        /** Rules every plan on the project must keep (given to its actors). */
        invariants: z.array(Invariant).max(50, 'at most 50 invariants').optional(),
        /** The command that checks a plan's work (its exit status is the definition of done). */
        verify: VerifyCommand.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type ProjectDefinition = z.infer<typeof ProjectDefinition>;

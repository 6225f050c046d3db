import { z } from 'zod';
import { VerifyCommand } from './project.definition.ts';
import { EntityName } from './names.ts';
import { Description, Invariant, Ref } from './definition-fields.ts';
import { InstructionPath } from '../context/context.ts';

const ArgumentSpec = z
  .object({
    type: z.enum(['string', 'number', 'integer', 'boolean']),
    description: z.string().optional(),
    default: z.union([z.string(), z.number(), z.boolean()]).optional(),
    required: z.boolean().optional(),
    enum: z
      .array(z.union([z.string(), z.number()]))
      .min(1)
      .optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const d = a.default;
    if (d === undefined) return;
    const ok =
      a.type === 'string'
        ? typeof d === 'string'
        : a.type === 'boolean'
          ? typeof d === 'boolean'
          : typeof d === 'number' && (a.type === 'number' || Number.isInteger(d));
    if (!ok) ctx.addIssue({ code: 'custom', path: ['default'], message: `must be a ${a.type}` });
  });

export const ActionStep = z
  .object({
    id: z
      .string()
      .regex(/^[a-z][a-z0-9_-]*$/, 'must be lowercase letters, digits, - and _')
      .optional(),
    description: z.string().optional(),
    tool: Ref,
    args: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const ActionDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    arguments: z
      .record(z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'argument names are identifiers'), ArgumentSpec)
      .optional(),
    descriptionTemplate: z.string().min(1, 'is required'),
    definitionOfDone: z.string().min(1, 'is required'),
    strategyActor: Ref.optional(),
    executionActor: Ref.optional(),
    invariants: z.array(Invariant).max(50, 'at most 50 invariants').optional(),
    /** The command that checks a plan's work (a project's verify takes precedence). */
    verify: VerifyCommand.optional(),
    steps: z.array(ActionStep).optional(),
    /** Whether its commands need the network (default none; a project's setting overrides it). */
    network: z.enum(['none', 'allow']).optional(),
    /** Variables its commands see (they never see the server's environment). */
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), z.string())
      .optional(),
    /** Instruction files its plans' actors read too, relative to a resource root of the project. */
    instructions: z.array(InstructionPath).max(50, 'at most 50 files').optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    const declared = new Set(Object.keys(a.arguments ?? {}));
    const check = (text: string, path: (string | number)[]): void => {
      for (const m of text.matchAll(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g)) {
        if (!declared.has(m[1] ?? ''))
          ctx.addIssue({ code: 'custom', path, message: `uses {{${m[1]}}}, which is not a declared argument` });
      }
    };
    check(a.descriptionTemplate, ['descriptionTemplate']);
    check(a.definitionOfDone, ['definitionOfDone']);
    a.steps?.forEach((s, i) => check(JSON.stringify(s.args ?? {}), ['steps', i, 'args']));
  });
export type ActionDefinition = z.infer<typeof ActionDefinition>;

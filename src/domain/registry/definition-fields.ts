import { z } from 'zod';
import { EntityName } from './names.ts';

/** Field schemas that several kinds of definition share. */
export const Description = z.string().max(2000, 'is at most 2000 characters');
export const Ref = EntityName;
export const AbsolutePath = z
  .string()
  .min(1)
  .refine((p) => p.startsWith('/'), 'must be an absolute path');

/** A JSON Schema document (checked for shape, not re-validated as a meta-schema). */
export const JsonSchemaObject = z
  .looseObject({ type: z.string().optional() })
  .refine((s) => s.type === undefined || s.type === 'object', {
    message: 'a tool input schema must describe an object ("type": "object")',
  });

/** One rule a plan's work must keep (a project's or an action's invariants). */
export const Invariant = z.string().trim().min(1, 'must not be empty').max(1000, 'at most 1000 characters');

import { AppError, type FieldViolation } from '../../domain/errors.ts';
import type { ActionDefinition } from '../../domain/registry/action.definition.ts';

export type ArgValue = string | number | boolean;

/**
 * Checks plan arguments against the action's schema: unknown names, missing required values,
 * types (strings from the command line are converted: "3" for an integer, "true" for a boolean),
 * enums; fills defaults. Reports every problem at once.
 */
export function resolveArguments(action: ActionDefinition, given: Record<string, unknown>): Record<string, ArgValue> {
  const specs = action.arguments ?? {};
  const out: Record<string, ArgValue> = {};
  const problems: FieldViolation[] = [];
  for (const name of Object.keys(given)) {
    if (!(name in specs))
      problems.push({
        field: `arguments.${name}`,
        description: `is not an argument of ${action.name} (it takes: ${Object.keys(specs).join(', ') || 'none'})`,
      });
  }
  for (const [name, spec] of Object.entries(specs)) {
    const raw = given[name];
    if (raw === undefined) {
      if (spec.default !== undefined) out[name] = spec.default;
      else if (spec.required !== false)
        problems.push({
          field: `arguments.${name}`,
          description: `is required${spec.description ? ` (${spec.description})` : ''}`,
        });
      continue;
    }
    const v = coerce(raw, spec.type);
    if (v === undefined) {
      problems.push({
        field: `arguments.${name}`,
        description: `must be ${spec.type === 'integer' ? 'an integer' : `a ${spec.type}`} (got ${JSON.stringify(raw)})`,
      });
      continue;
    }
    if (spec.enum && !spec.enum.includes(v as string | number)) {
      problems.push({ field: `arguments.${name}`, description: `must be one of ${spec.enum.join(', ')}` });
      continue;
    }
    out[name] = v;
  }
  if (problems.length > 0) {
    throw new AppError(
      'INVALID_PARAMS',
      `Invalid arguments for ${action.name}: ${problems.map((p) => `${p.field} ${p.description}`).join('; ')}`,
      {
        fields: problems,
        hint: `see the action's arguments with \`agents action show ${action.name}\``,
      },
    );
  }
  return out;
}

function coerce(raw: unknown, type: 'string' | 'number' | 'integer' | 'boolean'): ArgValue | undefined {
  switch (type) {
    case 'string':
      return typeof raw === 'string'
        ? raw
        : typeof raw === 'number' || typeof raw === 'boolean'
          ? String(raw)
          : undefined;
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === 'yes' || raw === '1') return true;
      if (raw === 'false' || raw === 'no' || raw === '0') return false;
      return undefined;
    case 'number':
    case 'integer': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      if (!Number.isFinite(n)) return undefined;
      if (type === 'integer' && !Number.isInteger(n)) return undefined;
      return n;
    }
  }
}

/**
 * The checks of a tool's arguments that can be made before the tool runs, where the tool's JSON
 * Schema alone cannot say it: a property declared `format: "regex"` must compile as a JavaScript
 * regular expression (with the call's `flags`, which change what is valid: `u` refuses `\-`),
 * and a string property with a `pattern` must match it. A plan's declared steps are checked with
 * this when the plan is made, so that a wrong argument is refused at `plan use`, not found at
 * execute when no correction can change a fixed step.
 */
import { messageOf, type FieldViolation } from '../errors.ts';

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The problems of `args` against the regex formats and string patterns of `schema` (empty: none found). */
export function toolArgumentProblems(schema: Schema, args: Record<string, unknown>): FieldViolation[] {
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const problems: FieldViolation[] = [];
  const flags = typeof args['flags'] === 'string' ? args['flags'] : '';
  for (const [name, spec] of Object.entries(properties)) {
    const value = args[name];
    if (!isObject(spec) || typeof value !== 'string') continue;
    if (typeof spec['pattern'] === 'string' && !new RegExp(spec['pattern'], 'u').test(value)) {
      problems.push({ field: name, description: `${JSON.stringify(value)} does not match ${spec['pattern']}` });
      continue;
    }
    if (spec['format'] !== 'regex') continue;
    try {
      // Only flags the pattern above lets through reach here; a wrong one is reported on `flags`.
      new RegExp(value, /^[dgimsuvy]*$/.test(flags) ? flags : '');
    } catch (e) {
      problems.push({ field: name, description: `is not a valid regular expression: ${messageOf(e)}` });
    }
  }
  return problems;
}

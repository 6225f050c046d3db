/**
 * A zod schema's top-level fields as the reference docs show them: name, a short type, whether
 * it is required, and its description — read from `z.toJSONSchema`, so the docs say what the
 * wire says.
 */
import { z } from 'zod';

type Json = Record<string, unknown>;

export interface Field {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The cases of a schema: one for an object, one per case of a union of objects. */
export interface SchemaShape {
  /** Each case's fields (one case for a plain object). */
  cases: Field[][];
  /** The schema's type when it is not an object (a scalar, an array). */
  type?: string;
}

const MAX_KEYS_SHOWN = 6;

/** A JSON Schema as a short type: `string`, `'a' | 'b'`, `array of object {a, b}`, … */
export function typeOf(schema: Json): string {
  if (Array.isArray(schema['enum'])) return schema['enum'].map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in schema) return JSON.stringify(schema['const']);
  const union = (schema['anyOf'] ?? schema['oneOf']) as Json[] | undefined;
  if (Array.isArray(union)) return [...new Set(union.map(typeOf))].join(' | ');
  const type = schema['type'];
  if (Array.isArray(type)) return type.join(' | ');
  if (type === 'array') {
    const items = schema['items'];
    return items && typeof items === 'object' ? `array of ${typeOf(items as Json)}` : 'array';
  }
  if (type === 'object') {
    const keys = Object.keys(schema['properties'] ?? {});
    if (keys.length === 0) return schema['additionalProperties'] ? 'map' : 'object';
    const shown = keys.slice(0, MAX_KEYS_SHOWN).join(', ');
    return `object {${shown}${keys.length > MAX_KEYS_SHOWN ? ', …' : ''}}`;
  }
  if (typeof type === 'string') return typeof schema['format'] === 'string' ? `${type} (${schema['format']})` : type;
  return 'any';
}

function fieldsOf(schema: Json): Field[] {
  const properties = (schema['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    type: typeOf(s),
    required: required.has(name),
    description: typeof s['description'] === 'string' ? s['description'] : '',
  }));
}

/** The shape of a method's params (`io: 'input'`, what a client sends) or result (what it gets). */
export function shapeOf(schema: z.ZodType, io: 'input' | 'output'): SchemaShape {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  if (json['type'] === 'object') return { cases: [fieldsOf(json)] };
  const union = (json['anyOf'] ?? json['oneOf']) as Json[] | undefined;
  if (Array.isArray(union) && union.every((c) => c['type'] === 'object')) return { cases: union.map(fieldsOf) };
  return { cases: [], type: typeOf(json) };
}

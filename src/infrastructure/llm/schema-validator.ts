/**
 * JSON Schema validation of tool arguments with ajv 8. Compiled validators are cached by the
 * schema's JSON (a tool's schema is compiled once), in a bounded cache.
 */
import { createRequire } from 'node:module';
import type { Ajv as AjvType, ErrorObject, ValidateFunction } from 'ajv';
import type { SchemaValidator } from '../../application/index.ts';
import { messageOf } from '../../domain/errors.ts';

/** ajv takes ~100 ms to load: only an agent whose LLM actor calls a tool pays for it (at its first call). */
const load = (): typeof AjvType => (createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvType }).Ajv;

const CACHE_LIMIT = 256;

type Compiled = { ok: true; validate: ValidateFunction } | { ok: false; problem: string };

export class AjvSchemaValidator implements SchemaValidator {
  private ajvInstance: AjvType | undefined;

  private get ajv(): AjvType {
    if (!this.ajvInstance) {
      const Ajv = load();
      this.ajvInstance = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    }
    return this.ajvInstance;
  }
  private readonly cache = new Map<string, Compiled>();

  validate(schema: Record<string, unknown>, value: unknown): string[] {
    const compiled = this.compile(schema);
    if (!compiled.ok) return [compiled.problem];
    if (compiled.validate(value)) return [];
    return (compiled.validate.errors ?? []).map(describe);
  }

  private compile(schema: Record<string, unknown>): Compiled {
    const key = JSON.stringify(schema);
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      // most recently used last: the oldest is evicted first
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    let compiled: Compiled;
    try {
      // A schema's $id would be registered in ajv for good: compile a copy without it.
      const { $id: _id, ...rest } = schema;
      compiled = { ok: true, validate: this.ajv.compile(rest) };
    } catch (err) {
      compiled = { ok: false, problem: `the tool's input schema is invalid: ${messageOf(err)}` };
    }
    this.cache.set(key, compiled);
    if (this.cache.size > CACHE_LIMIT) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    return compiled;
  }
}

function describe(e: ErrorObject): string {
  const at = e.instancePath === '' ? '' : `${e.instancePath} `;
  const extra =
    e.keyword === 'additionalProperties'
      ? ` '${String((e.params as { additionalProperty?: unknown }).additionalProperty)}'`
      : e.keyword === 'enum'
        ? ` (${((e.params as { allowedValues?: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')})`
        : '';
  return `${at}${e.message ?? 'is invalid'}${extra}`;
}

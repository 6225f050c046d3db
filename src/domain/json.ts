/**
 * A deep copy of JSON data (what tasks are made of: parsed requests, stored JSON, actor output),
 * as JSON.stringify would write it: a value with `toJSON` (a Date) is copied as what that returns.
 * Several times cheaper than structuredClone, which serialises through the V8 value serializer
 * (and keeps a Date a Date where the stored task has its ISO string).
 */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  // As JSON.stringify: what toJSON returns is written as it is, without asking it again.
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return (typeof toJSON === 'function' ? copyPlain(toJSON.call(value)) : copyPlain(value)) as T;
}

function copyPlain(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i]);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = copyJson((value as Record<string, unknown>)[key]);
    // A "__proto__" key (JSON.parse makes it an own property) must stay data, not a prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}

/**
 * A value that arrives as JSON text (a stored snapshot): a transport that only writes it out sends
 * the text as it is, and whatever needs the value parses it, once, on first use. `toJSON` makes
 * JSON.stringify of anything holding it write the same JSON as the value would.
 */
export class JsonText<T> {
  private parsed: T | undefined;

  readonly json: string;

  constructor(json: string) {
    this.json = json;
  }

  get value(): T {
    if (this.parsed === undefined) this.parsed = JSON.parse(this.json) as T;
    return this.parsed;
  }

  toJSON(): T {
    return this.value;
  }
}

import { AppError } from './errors.ts';

/**
 * Limits on what a client may send, checked before anything is stored. A payload past one of them
 * is refused as invalid parameters (-32602) naming the limit, so a client can tell what to change.
 */
export interface PayloadLimits {
  /** Deepest nesting of arrays and objects in one JSON-RPC request (the request object is depth 1). */
  maxJsonDepth: number;
  /** Parts in one message. */
  maxParts: number;
  /** Size of one part (its text, raw bytes, url or data, as UTF-8 JSON), in bytes. */
  maxPartBytes: number;
  /** Size of one message (all its parts and metadata), in bytes. */
  maxMessageBytes: number;
  /** Keys in one metadata object (of the message, of a part, of the request). */
  maxMetadataKeys: number;
}

export const DEFAULT_LIMITS: Readonly<PayloadLimits> = Object.freeze({
  maxJsonDepth: 64,
  maxParts: 100,
  maxPartBytes: 1024 * 1024,
  maxMessageBytes: 4 * 1024 * 1024,
  maxMetadataKeys: 64,
});

/** The settings' names as the CLI flag and the environment variable spell them (for messages). */
export const LIMIT_SETTINGS: Readonly<Record<keyof PayloadLimits, { flag: string; env: string }>> = Object.freeze({
  maxJsonDepth: { flag: '--max-json-depth', env: 'CLEVERAGENTS_MAX_JSON_DEPTH' },
  maxParts: { flag: '--max-parts', env: 'CLEVERAGENTS_MAX_PARTS' },
  maxPartBytes: { flag: '--max-part-bytes', env: 'CLEVERAGENTS_MAX_PART_BYTES' },
  maxMessageBytes: { flag: '--max-message-bytes', env: 'CLEVERAGENTS_MAX_MESSAGE_BYTES' },
  maxMetadataKeys: { flag: '--max-metadata-keys', env: 'CLEVERAGENTS_MAX_METADATA_KEYS' },
});

/**
 * How deep `value` nests, stopping as soon as it passes `max` (so a hostile value costs at most
 * `max` levels of work per branch). Iterative: a recursive walk would itself overflow the stack on
 * the very input it is meant to refuse.
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<{ v: object; d: number }> = [{ v: value, d: 1 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: object; d: number };
    if (d > max) return true;
    const children: unknown[] = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push({ v: c, d: d + 1 });
  }
  return false;
}

/** The refusal of a request nested deeper than the limit. */
export function depthError(max: number): AppError {
  return limitError('maxJsonDepth', max, '(request)', `nests deeper than ${max} levels`);
}

interface PartLike {
  text?: string | undefined;
  raw?: string | undefined;
  url?: string | undefined;
  data?: unknown;
  metadata?: Record<string, unknown> | undefined;
  filename?: string | undefined;
  mediaType?: string | undefined;
}

interface MessageLike {
  parts: readonly PartLike[];
  metadata?: Record<string, unknown> | undefined;
}

/**
 * Checks a message a client sends (and the request's metadata) against the limits; throws an
 * INVALID_PARAMS error naming the first limit passed and the field that passed it.
 */
export function checkMessageLimits(
  message: MessageLike,
  requestMetadata: Record<string, unknown> | undefined,
  limits: PayloadLimits,
): void {
  if (message.parts.length > limits.maxParts) {
    throw limitError('maxParts', limits.maxParts, 'message.parts', `has ${message.parts.length} parts`);
  }
  checkKeys(requestMetadata, 'metadata', limits);
  checkKeys(message.metadata, 'message.metadata', limits);
  let total = jsonBytes(message.metadata) + jsonBytes(requestMetadata);
  message.parts.forEach((p, i) => {
    checkKeys(p.metadata, `message.parts.${i}.metadata`, limits);
    const size = partBytes(p);
    if (size > limits.maxPartBytes)
      throw limitError('maxPartBytes', limits.maxPartBytes, `message.parts.${i}`, `is ${size} bytes`);
    total += size;
  });
  if (total > limits.maxMessageBytes)
    throw limitError('maxMessageBytes', limits.maxMessageBytes, 'message', `is ${total} bytes`);
}

function checkKeys(metadata: Record<string, unknown> | undefined, field: string, limits: PayloadLimits): void {
  if (!metadata) return;
  const n = Object.keys(metadata).length;
  if (n > limits.maxMetadataKeys) throw limitError('maxMetadataKeys', limits.maxMetadataKeys, field, `has ${n} keys`);
}

function partBytes(p: PartLike): number {
  return (
    utf8Bytes(p.text) +
    utf8Bytes(p.raw) +
    utf8Bytes(p.url) +
    utf8Bytes(p.filename) +
    utf8Bytes(p.mediaType) +
    jsonBytes(p.data) +
    jsonBytes(p.metadata)
  );
}

const utf8Bytes = (s: string | undefined): number => (s === undefined ? 0 : Buffer.byteLength(s, 'utf8'));

/**
 * About the size of `value` as JSON (strings counted in UTF-8 plus quotes, punctuation counted
 * once per item), walked iteratively: exact enough to enforce a byte limit, and safe on any shape.
 */
export function jsonBytes(value: unknown): number {
  if (value === undefined) return 0;
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += Buffer.byteLength(v, 'utf8') + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') size += String(v).length;
    else if (v === null) size += 4;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const c of v) stack.push(c);
    } else if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      size += 2 + entries.length * 2;
      for (const [k, c] of entries) {
        size += Buffer.byteLength(k, 'utf8') + 2;
        stack.push(c);
      }
    }
  }
  return size;
}

function limitError(limit: keyof PayloadLimits, max: number, field: string, what: string): AppError {
  const setting = LIMIT_SETTINGS[limit];
  return new AppError('INVALID_PARAMS', `Invalid parameters: ${field} ${what}; the limit ${limit} is ${max}`, {
    fields: [{ field, description: `exceeds the limit ${limit} (${max})` }],
    details: { limit, max },
    hint: `the server's operator sets this limit with ${setting.flag} or ${setting.env}`,
  });
}

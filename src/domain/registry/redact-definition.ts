/**
 * What a registry definition looks like wherever it is shown (`show`, `list`, every output format,
 * every client): the values a definition may carry in clear — an MCP server's or a hook's `env`
 * and `headers` (an `Authorization` header, a `GITHUB_TOKEN`), and a URL's userinfo and query
 * (`?api_key=…`) — are replaced by {@link REDACTED}, their keys kept, so that what is configured
 * stays visible to a namespace's viewers without the credentials in it. A secret kept as a secret
 * (`apiKeySecret: openai`) is a name, not a value, and is shown as it is.
 *
 * The definition used to run (`lookup`, `use`) is never redacted: this is for output only.
 */

/** What a hidden value is shown as (the same mark as the MCP layer's redaction of messages). */
export const REDACTED = '[redacted]';

/** Fields whose values are all hidden: maps of variable or header names to values. */
const VALUE_MAPS = new Set(['env', 'headers']);
/** Fields holding a URL whose userinfo and query values are hidden. */
const URL_FIELDS = new Set(['url', 'baseUrl']);

/** `url` with its username, password and every query value replaced (the names kept); text that is not a URL as it is. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (!u.username && !u.password && !u.search) return url;
  if (u.username) u.username = REDACTED;
  if (u.password) u.password = REDACTED;
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=${REDACTED}`).join('&');
  u.search = query;
  // URL percent-encodes the mark's brackets in the userinfo; the mark reads better as it is.
  return u.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

/** A copy of a definition (any kind, any depth) with the values of {@link VALUE_MAPS} and the secrets of {@link URL_FIELDS} hidden. */
export function redactDefinition<T>(definition: T): T {
  return walk(definition, undefined) as T;
}

function walk(value: unknown, key: string | undefined): unknown {
  if (typeof value === 'string') return key !== undefined && URL_FIELDS.has(key) ? redactUrl(value) : value;
  if (Array.isArray(value)) return value.map((v) => walk(v, undefined));
  if (value === null || typeof value !== 'object') return value;
  const hideValues = key !== undefined && VALUE_MAPS.has(key);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = hideValues && typeof v === 'string' ? REDACTED : walk(v, k);
  return out;
}

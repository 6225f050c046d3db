/**
 * What a namespace's secret may hold (`agents secret set NAME`): the rules a value is checked by
 * before it is sealed and stored. A message here never quotes the value.
 */

/** The largest value, in UTF-8 bytes (an API key is far smaller; a PEM key still fits). */
export const MAX_SECRET_BYTES = 16 * 1024;
/** How many secrets one namespace may hold. */
export const MAX_SECRETS_PER_NAMESPACE = 500;

/** Why a value cannot be stored; absent when it can. */
export type SecretValueProblem = 'empty' | 'too-large';

/**
 * The value as stored: one trailing newline removed (what `echo` and a terminal add), nothing
 * else — a key is taken exactly as given.
 */
export function normaliseSecretValue(raw: string): { value: string; problem?: SecretValueProblem } {
  const value = raw.endsWith('\r\n') ? raw.slice(0, -2) : raw.endsWith('\n') ? raw.slice(0, -1) : raw;
  if (value === '') return { value, problem: 'empty' };
  if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_BYTES) return { value, problem: 'too-large' };
  return { value };
}

/** How a secret is bound to its row: sealed with this, it opens only as that namespace's secret of that name. */
export const secretBinding = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Replaces each secret (at least 4 characters long) in a text by `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

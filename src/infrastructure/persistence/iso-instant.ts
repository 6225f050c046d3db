import { AppError } from '../../domain/errors.ts';

/**
 * `YYYY-MM-DDTHH:mm:ss.sssZ` with in-range fields and a day up to 28: such a string is a real
 * instant that toISOString() gives back unchanged. (Checked by hand: a regex was a visible cost at
 * nine timestamps per SendMessage.)
 */
function isCanonicalInstant(v: string): boolean {
  if (v.length !== 24 || v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45 || v.charCodeAt(10) !== 84) return false;
  if (v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58 || v.charCodeAt(19) !== 46 || v.charCodeAt(23) !== 90)
    return false;
  for (const i of DIGITS) {
    const c = v.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  const two = (i: number): number => (v.charCodeAt(i) - 48) * 10 + (v.charCodeAt(i + 1) - 48);
  const month = two(5);
  const day = two(8);
  return month >= 1 && month <= 12 && day >= 1 && day <= 28 && two(11) <= 23 && two(14) <= 59 && two(17) <= 59;
}
const DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];

/**
 * A timestamp in the one form the tables store (`toISOString()`: fixed width, UTC, milliseconds),
 * so that comparing strings compares instants.
 */
export function toIsoInstant(value: string, what: string): string {
  // Already in that form (what toISOString() wrote, as nearly every stored timestamp is).
  if (isCanonicalInstant(value)) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new AppError('INVALID_PARAMS', `${what} is not a valid timestamp: ${JSON.stringify(value)}`, {
      fields: [{ field: what, description: 'must be an ISO 8601 timestamp such as 2026-01-31T12:00:00.000Z' }],
    });
  }
  return new Date(ms).toISOString();
}

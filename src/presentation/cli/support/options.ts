import { InvalidArgumentError } from 'commander';

/** A commander parser for an integer flag within bounds (a bad value is a usage error, exit 2). */
export const intOption =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string): number => {
    if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('must be a whole number');
    const n = Number(value);
    if (n < min || n > max)
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}` : `must be between ${min} and ${max}`,
      );
    return n;
  };

/** A commander parser for a flag that takes one of a few words (a bad value is a usage error, exit 2). */
export const choiceOption =
  <T extends string>(choices: readonly T[]) =>
  (value: string): T => {
    if ((choices as readonly string[]).includes(value)) return value as T;
    throw new InvalidArgumentError(`must be one of ${choices.join(', ')}`);
  };

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** A commander parser for a duration — `30m`, `12h`, `7d` (also `s`, `w`; `0` alone) — in seconds. */
export function durationOption(value: string): number {
  const m = /^(\d{1,9})([smhdw])$/.exec(value.trim());
  if (value.trim() === '0') return 0;
  if (!m) throw new InvalidArgumentError('must be a number and a unit: 30m, 12h, 7d (s, m, h, d, w)');
  return Number(m[1]) * (DURATION_UNITS[m[2] ?? 's'] ?? 1);
}

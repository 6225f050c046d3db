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

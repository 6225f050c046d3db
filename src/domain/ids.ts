import { getRandomValues } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * Cryptographic randomness drawn from a pool: ulid's default asks the OS-backed generator once per
 * character (16 calls per id), which showed up in server profiles.
 */
const pool = new Uint8Array(4096);
let at = pool.length;
function randomFraction(): number {
  if (at >= pool.length) {
    getRandomValues(pool);
    at = 0;
  }
  return (pool[at++] as number) / 256;
}

const next = monotonicFactory(randomFraction);

/** A new ULID: sortable by creation time, unique within the process even in the same millisecond. */
export const newId = (): string => next();

/**
 * Client-chosen identifiers (context ids, message ids) are opaque but bounded: printable ASCII
 * without spaces, at most 128 characters.
 */
export const SAFE_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

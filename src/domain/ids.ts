import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

/** A new ULID: sortable by creation time, unique within the process even in the same millisecond. */
export const newId = (): string => next();

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const isUlid = (s: string): boolean => ULID.test(s);

/**
 * Client-chosen identifiers (context ids, message ids) are opaque but bounded: printable ASCII
 * without spaces, at most 128 characters.
 */
export const SAFE_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

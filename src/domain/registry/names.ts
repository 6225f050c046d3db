import { z } from 'zod';

const SEGMENT = '[a-z][a-z0-9_-]{0,62}';
const NAME = new RegExp(`^${SEGMENT}/${SEGMENT}$`);
const BARE = new RegExp(`^${SEGMENT}$`);

/** The namespace every local entity lives in unless named otherwise; it never leaves the machine. */
export const DEFAULT_NAMESPACE = 'local';
/** Shipped entities: listed everywhere, changed by no one. */
export const BUILTIN_NAMESPACE = 'builtin';

/**
 * `namespace/name`, both segments `[a-z][a-z0-9-_]*` (at most 63 characters). A bare `name` means
 * `local/name`.
 */
export const EntityName = z
  .string()
  .transform((s) => (BARE.test(s) ? `${DEFAULT_NAMESPACE}/${s}` : s))
  .pipe(
    z
      .string()
      .regex(NAME, 'must be namespace/name: lowercase letters, digits, - and _, each part starting with a letter'),
  );

export const NamespaceName = z
  .string()
  .regex(new RegExp(`^${SEGMENT}$`), 'must be lowercase letters, digits, - and _, starting with a letter');

export const namespaceOf = (name: string): string => name.slice(0, name.indexOf('/'));

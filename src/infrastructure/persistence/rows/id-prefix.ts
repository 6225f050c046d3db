import { sql, type Expression, type SqlBool } from 'kysely';

/**
 * `id LIKE 'prefix%' ESCAPE '\'` with the prefix's `%`, `_` and `\` matching only themselves (a
 * typed `_` is not a wildcard). The same text in SQLite and PostgreSQL; queries that use it also
 * filter by owner, so the scan stays within the caller's rows (their owner index).
 */
export function idStartsWith(column: string, prefix: string): Expression<SqlBool> {
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<SqlBool>`${sql.ref(column)} like ${pattern} escape ${sql.raw("'\\'")}`;
}

import { AppError } from '../domain/errors.ts';

/** A prefix shorter than this could match most of a busy namespace; git's own minimum is 4 as well. */
export const MIN_ID_PREFIX = 4;
/** The candidates an ambiguous prefix lists (more only says how many). */
export const MAX_CANDIDATES = 10;
/** The word that names the caller's most recent plan, session or task. */
export const LAST_REF = 'last';

/** What a kind of record gives the resolver; every query is already limited to what the caller may see. */
export interface RefLookup<T> {
  /** `plan`, `session`, `task`: used in messages. */
  kind: string;
  /** The record with exactly this id, when the caller may see it. */
  exact(id: string): Promise<T | undefined>;
  /** The caller's most recent record (of the current project where there is one). */
  latest(): Promise<T | undefined>;
  /** Up to `limit` of the caller's records whose id starts with `prefix`. */
  byPrefix(prefix: string, limit: number): Promise<T[]>;
  idOf(record: T): string;
  /** A short description for the candidates list (the goal, the title, the first message). */
  describe(record: T): string;
  /** The NOT_FOUND error of the kind (its hint names the list command). */
  notFound(ref: string): AppError;
}

/**
 * Resolves what a user typed for an id: the exact id (one query, as before), `last`, or a unique
 * prefix of an id the caller may see (as git and docker accept), so every front end gets short ids.
 */
export async function resolveRef<T>(ref: string, lookup: RefLookup<T>): Promise<T> {
  if (ref === LAST_REF) {
    const latest = await lookup.latest();
    if (!latest) {
      const error = lookup.notFound(ref);
      throw new AppError('NOT_FOUND', `You have no ${lookup.kind} yet, so \`last\` names none`, {
        details: { entity: lookup.kind, id: ref },
        hint: error.hint,
      });
    }
    return latest;
  }
  const exact = await lookup.exact(ref);
  if (exact) return exact;
  if (ref.length < MIN_ID_PREFIX) {
    throw new AppError(
      'INVALID_PARAMS',
      `No ${lookup.kind} has the id ${ref}, and a prefix needs at least ${MIN_ID_PREFIX} characters`,
      {
        details: { entity: lookup.kind, id: ref, minPrefix: MIN_ID_PREFIX },
        hint: `type at least ${MIN_ID_PREFIX} characters of the ${lookup.kind} id, or \`last\``,
      },
    );
  }
  // Ids are ULIDs, upper case: a prefix typed in lower case means the same id.
  let matches = await lookup.byPrefix(ref, MAX_CANDIDATES + 1);
  if (matches.length === 0 && ref.toUpperCase() !== ref)
    matches = await lookup.byPrefix(ref.toUpperCase(), MAX_CANDIDATES + 1);
  const [only] = matches;
  if (only && matches.length === 1) return only;
  if (!only) throw lookup.notFound(ref);
  const shown = matches.slice(0, MAX_CANDIDATES);
  const candidates = shown.map((r) => ({ id: lookup.idOf(r), description: lookup.describe(r) }));
  const more = matches.length > MAX_CANDIDATES ? '\n  … and more' : '';
  throw new AppError(
    'INVALID_PARAMS',
    `The prefix ${ref} matches more than one ${lookup.kind}:\n${candidates
      .map((c) => `  ${c.id}  ${c.description}`)
      .join('\n')}${more}`,
    {
      details: { entity: lookup.kind, id: ref, candidates },
      hint: `type more characters of the ${lookup.kind} id`,
    },
  );
}

import type { GlobVerdict } from '../ports/file-inventory.port.ts';
import { STATUS, type ListingIndex } from './context-ranking.ts';
import { hasBinaryExtension } from './context-terms.ts';

/**
 * Each file's status under the include/exclude globs (a candidate, not included, excluded, or
 * binary by its extension), computed once per listing and filter and kept on its index.
 */
export function candidateStatus(
  index: ListingIndex,
  s: { include: readonly string[]; exclude: readonly string[] },
  globFilter: () => (path: string) => GlobVerdict,
): Uint8Array {
  const key = JSON.stringify([s.include, s.exclude]);
  const known = index.filters.get(key);
  if (known) return known;
  const everything = s.exclude.length === 0 && s.include.every((g) => g === '**');
  const verdict = everything ? () => 'included' : globFilter();
  const files = index.files;
  const status = new Uint8Array(files.length);
  for (let i = 0; i < files.length; i++) {
    const path = (files[i] as { path: string }).path;
    const v = verdict(path);
    status[i] =
      v === 'not-included'
        ? STATUS.notIncluded
        : v === 'excluded'
          ? STATUS.excluded
          : hasBinaryExtension(path)
            ? STATUS.binary
            : STATUS.candidate;
  }
  index.filters.set(key, status);
  return status;
}

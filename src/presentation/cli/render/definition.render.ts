import { stringify } from 'yaml';
import type { Palette } from './colors.ts';

/**
 * A definition (or any JSON value) as YAML for people, indented under a heading; keys dimmed in
 * rich mode. Plain mode prints the same YAML, so it can be copied back into a definition file.
 */
export function renderYaml(value: unknown, mode: { rich: boolean; pal: Palette }, indent = '  '): string {
  const text = stringify(value, { lineWidth: 0 }).replace(/\n$/, '');
  if (text === '' || text === '{}' || text === '[]') return '';
  return `${text
    .split('\n')
    .map(
      (line) =>
        indent +
        (mode.rich
          ? line.replace(
              /^(\s*(?:- )?)([^\s:#][^:]*?):(\s|$)/,
              (_, lead: string, key: string, rest: string) => `${lead}${mode.pal.cyan(key)}:${rest}`,
            )
          : line),
    )
    .join('\n')}\n`;
}

/** `2026-01-01T00:00:00.000Z` → `2026-01-01 00:00:00` for rich output; untouched in plain. */
export const whenText = (ts: string, rich: boolean): string =>
  rich ? ts.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : ts;

/** `local/api` for a bare `api`: names without a namespace are in `local/`. */
export const qualify = (name: string): string => (/^[^/\s]+$/.test(name) ? `local/${name}` : name);

/** A short form of a content hash for people (`sha256:0123456789ab`). */
export const shortHash = (h: string): string => h.replace(/^(sha256:[0-9a-f]{12})[0-9a-f]+$/, '$1');

export const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

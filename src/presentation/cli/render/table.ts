import { visibleLength, type Palette } from './colors.ts';

export interface Column<T> {
  header: string;
  /** The cell's text (plain, unstyled). */
  value(row: T): string;
  /** Styling for rich output; applied after padding is computed. */
  style?(text: string, row: T): string;
}

/**
 * Rich: aligned columns under a bold header, the last column cut to the terminal width.
 * Plain: one tab-separated line per row, no header, no styling — stable for grep, cut and awk.
 */
export function renderTable<T>(
  rows: readonly T[],
  columns: readonly Column<T>[],
  mode: { rich: boolean; pal: Palette; width?: number | undefined },
): string {
  const cells = rows.map((r) => columns.map((c) => oneLine(c.value(r))));
  if (!mode.rich) return cells.map((line) => `${line.join('\t')}\n`).join('');
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((line) => (line[i] ?? '').length)));
  const lastStart = widths.slice(0, -1).reduce((a, w) => a + w + 2, 0);
  // Cut the last column to the terminal, unless that leaves too little of it to be useful.
  const room = mode.width !== undefined && mode.width - lastStart >= 24 ? mode.width - lastStart : Infinity;
  const fmt = (texts: string[], style: (text: string, col: number) => string): string =>
    texts
      .map((t, i) => {
        const last = i === texts.length - 1;
        const cut = last && t.length > room ? `${t.slice(0, room - 1)}…` : t;
        const styled = style(cut, i);
        return last ? styled : styled + ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(styled))) + '  ';
      })
      .join('')
      .trimEnd();
  const lines = [
    fmt(
      columns.map((c) => c.header),
      (t) => mode.pal.bold(t),
    ),
  ];
  cells.forEach((line, r) => {
    const row = rows[r] as T;
    lines.push(fmt(line, (t, i) => columns[i]?.style?.(t, row) ?? t));
  });
  return `${lines.join('\n')}\n`;
}

/** Key/value lines: `key: value` (plain) or aligned dim keys (rich). Empty values are left out. */
export function renderFields(
  fields: ReadonlyArray<readonly [string, string | undefined]>,
  mode: { rich: boolean; pal: Palette; indent?: string },
): string {
  const shown = fields.filter((f): f is readonly [string, string] => f[1] !== undefined && f[1] !== '');
  if (!mode.rich) return shown.map(([k, v]) => `${k}: ${oneLine(v)}\n`).join('');
  const w = Math.max(0, ...shown.map(([k]) => k.length));
  const indent = mode.indent ?? '  ';
  return shown
    .map(([k, v]) => `${indent}${mode.pal.dim(k.padEnd(w))}  ${v.replace(/\n/g, `\n${indent}${' '.repeat(w + 2)}`)}\n`)
    .join('');
}

/** Newlines and tabs would break one-record-per-line output. */
export const oneLine = (s: string): string => s.replace(/\r?\n/g, '\\n').replace(/\t/g, ' ');

/** Small statistics and formatting helpers for the bench report. */

/** The p-quantile (0..1) of ascending-sorted values (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i] as number;
}

export function median(values: readonly number[]): number {
  const v = values.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? (v[mid] as number) : ((v[mid - 1] as number) + (v[mid] as number)) / 2;
}

/** A number with about three significant digits. */
export function fmt(x: number, unit = ''): string {
  if (!Number.isFinite(x)) return 'n/a';
  const a = Math.abs(x);
  const s =
    a >= 1000
      ? Math.round(x).toLocaleString('en-US')
      : a >= 100
        ? x.toFixed(0)
        : a >= 10
          ? x.toFixed(1)
          : a >= 1
            ? x.toFixed(2)
            : x.toFixed(3);
  return unit ? `${s} ${unit}` : s;
}

export function ratio(ours: number, base: number): string {
  if (!Number.isFinite(ours) || !Number.isFinite(base) || base === 0) return 'n/a';
  return `${(ours / base).toFixed(2)}×`;
}

/** Renders rows as an aligned plain-text table. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

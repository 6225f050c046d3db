/** Figures of a bench run, their targets, and the printed table. */
import { fmt, ratio, table } from './stats.ts';

export interface Figure {
  workload: string;
  metric: string;
  unit: string;
  ours: number;
  reference?: number | undefined;
  floor?: number | undefined;
  /** The target in words, and whether this run met it (undefined: not judged by this row). */
  target?: string | undefined;
  met?: boolean | undefined;
}

export class Report {
  readonly figures: Figure[] = [];
  readonly notes: string[] = [];

  add(f: Figure): Figure {
    this.figures.push(f);
    return f;
  }

  note(text: string): void {
    this.notes.push(text);
  }

  render(): string {
    const rows = this.figures.map((f) => [
      f.workload,
      `${f.metric}${f.unit ? ` (${f.unit})` : ''}`,
      fmt(f.ours),
      f.reference === undefined ? '—' : fmt(f.reference),
      f.floor === undefined ? '—' : fmt(f.floor),
      f.reference === undefined ? '—' : ratio(f.ours, f.reference),
      f.floor === undefined ? '—' : ratio(f.ours, f.floor),
      f.target ?? '',
      f.met === undefined ? '' : f.met ? 'yes' : 'NO',
    ]);
    return table(['workload', 'metric', 'ours', 'reference', 'floor', 'ours/ref', 'ours/floor', 'target', 'met'], rows);
  }
}

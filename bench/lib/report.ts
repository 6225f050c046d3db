/** Figures of a bench run, the verdict on each declared target, and the printed tables. */
import { fmt, ratio, table } from './stats.ts';
import { TARGETS, type Target } from './targets.ts';

export interface Figure {
  workload: string;
  metric: string;
  unit: string;
  ours: number;
  reference?: number | undefined;
  /** The bare floor, or the workload's own (the echo child, bare git, `node -e 0`). */
  floor?: number | undefined;
  /** The persisted floor (bench/servers/persisted-floor.ts). */
  persisted?: number | undefined;
}

/** A declared target and what this run measured for it. */
export interface Verdict {
  target: Target;
  /** Undefined when the run has no row for it (its workload failed) or more than one. */
  figure?: Figure | undefined;
  ours: number;
  /** What ours is compared with: the other side's figure, or the bound. */
  base: number;
  /** The least (>=) or most (<=) ours may be: base × times, or the bound. */
  limit: number;
  met: boolean | undefined;
  note?: string | undefined;
}

export class Report {
  readonly figures: Figure[] = [];
  /** What a workload could not measure here, and why (printed under the tables). */
  readonly notes: string[] = [];

  add(f: Figure): Figure {
    this.figures.push(f);
    return f;
  }

  note(text: string): void {
    this.notes.push(text);
  }

  /** The declared targets of the workloads that ran, each judged on its row of this run. */
  verdicts(ran: ReadonlySet<string>): Verdict[] {
    return TARGETS.filter((t) => ran.has(t.group)).map((t) => this.judge(t));
  }

  private judge(target: Target): Verdict {
    const rows = this.figures.filter((f) => f.workload === target.workload && target.metric.test(f.metric));
    const none = { target, ours: Number.NaN, base: Number.NaN, limit: Number.NaN, met: undefined };
    if (rows.length !== 1)
      return { ...none, note: rows.length === 0 ? 'not measured' : `${rows.length} rows match: a bench bug` };
    const figure = rows[0] as Figure;
    const base = 'bound' in target.against ? target.against.bound : (figure[target.against.side] ?? Number.NaN);
    const limit = 'bound' in target.against ? base : base * target.against.times;
    if (!Number.isFinite(figure.ours) || !Number.isFinite(limit))
      return { ...none, figure, ours: figure.ours, base, note: 'a side has no figure' };
    const met = target.op === '>=' ? figure.ours >= limit : figure.ours <= limit;
    return { target, figure, ours: figure.ours, base, limit, met };
  }

  /** Every row, targets and context alike, with each side and ours' ratio to it. */
  render(): string {
    const ratioTo = (f: Figure, side: number | undefined): string => (side === undefined ? '—' : ratio(f.ours, side));
    const rows = this.figures.map((f) => [
      f.workload,
      `${f.metric}${f.unit ? ` (${f.unit})` : ''}`,
      fmt(f.ours),
      f.reference === undefined ? '—' : fmt(f.reference),
      f.floor === undefined ? '—' : fmt(f.floor),
      f.persisted === undefined ? '—' : fmt(f.persisted),
      ratioTo(f, f.reference),
      ratioTo(f, f.floor),
      ratioTo(f, f.persisted),
    ]);
    return table(
      ['workload', 'metric', 'ours', 'reference', 'floor', 'persisted', 'ours/ref', 'ours/floor', 'ours/persisted'],
      rows,
    );
  }

  /** One line per target, met or not, and the count of each. */
  renderTargets(verdicts: readonly Verdict[]): string {
    const rows = verdicts.map((v) => {
      const unit = v.figure?.unit ? ` ${v.figure.unit}` : '';
      const a = v.target.against;
      const against = 'bound' in a ? 'bound' : `${a.label} ${fmt(v.base)}${unit}`;
      const required = 'bound' in a ? `${v.target.op} ${fmt(a.bound)}${unit}` : `${v.target.op} ${a.times}×`;
      return [
        v.target.name,
        `${fmt(v.ours)}${unit}`,
        against,
        'bound' in a ? '—' : ratio(v.ours, v.base),
        required,
        v.met === undefined ? (v.note ?? 'not measured') : v.met ? 'yes' : 'NO',
      ];
    });
    const met = verdicts.filter((v) => v.met === true).length;
    const missed = verdicts.filter((v) => v.met === false);
    const unmeasured = verdicts.filter((v) => v.met === undefined);
    const summary =
      `targets: ${met} of ${verdicts.length} met, ${missed.length} missed` +
      (unmeasured.length > 0 ? `, ${unmeasured.length} not measured` : '') +
      (missed.length > 0 ? `\nmissed: ${missed.map((v) => v.target.name).join('; ')}` : '') +
      (unmeasured.length > 0 ? `\nnot measured: ${unmeasured.map((v) => v.target.name).join('; ')}` : '');
    return `${table(['target', 'ours', 'against (same run)', 'ratio', 'required', 'met'], rows)}\n\n${summary}`;
  }
}

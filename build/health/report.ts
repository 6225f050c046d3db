/** All the measures of `npm run health`, and their two outputs: a table for people, JSON for tools. */
import {
  definitionCasts,
  duplicateBasenames,
  errorMessageCasts,
  forwarders,
  planAssignments,
} from './code.measures.ts';
import { type Measure, where } from './measure.ts';
import { longFiles, longFunctions } from './size.measures.ts';
import { loadSources } from './sources.ts';
import { e2eOwnHelpers, fixedSleeps, unitTestsWithIo } from './test.measures.ts';

export interface HealthReport {
  readonly root: string;
  readonly measures: readonly Measure[];
}

/** Reads the project at `root` and counts every measure, in the order of the issue (#38). */
export function measureHealth(root: string): HealthReport {
  const sources = loadSources(root);
  return {
    root,
    measures: [
      longFiles(sources),
      ...longFunctions(sources),
      forwarders(sources),
      ...planAssignments(sources),
      errorMessageCasts(sources),
      definitionCasts(sources),
      duplicateBasenames(sources),
      e2eOwnHelpers(sources),
      fixedSleeps(sources),
      unitTestsWithIo(sources),
    ],
  };
}

function countText(m: Measure): string {
  return m.outOf === undefined ? String(m.count) : `${m.count} of ${m.outOf}`;
}

/** The table, then each measure's findings (a list already printed under another measure is not repeated). */
export function renderTable(report: HealthReport): string {
  const width = Math.max(...report.measures.map((m) => m.title.length));
  const countWidth = Math.max(5, ...report.measures.map((m) => countText(m).length));
  const lines = [
    'Code health (npm run health; the measures of issue #38)',
    '',
    `${'Measure'.padEnd(width)}  ${'Count'.padStart(countWidth)}`,
    ...report.measures.map(
      (m) => `${m.title.padEnd(width)}  ${countText(m).padStart(countWidth)}${m.note ? `  (${m.note})` : ''}`,
    ),
  ];
  for (const m of report.measures) {
    if (m.findings.length === 0) continue;
    lines.push('', `${m.title}:`);
    if (m.listedWith !== undefined) {
      const other = report.measures.find((o) => o.id === m.listedWith);
      lines.push(`  the first ${m.count} of "${other?.title ?? m.listedWith}" above`);
      continue;
    }
    const placeWidth = Math.max(...m.findings.map((f) => where(f).length));
    for (const f of m.findings) lines.push(`  ${where(f).padEnd(placeWidth)}  ${f.what}`.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

/** The report as JSON: `{ measures: [{ id, title, count, outOf?, note?, findings: [{ file, line?, what, lines? }] }] }`. */
export function renderJson(report: HealthReport): string {
  return `${JSON.stringify({ measures: report.measures }, null, 2)}\n`;
}

import type { contextInspect, contextShow, ResultOf } from '../../../protocol/client/index.ts';
import { plural } from './definition.render.ts';
import { renderFields, renderTable } from './table.ts';
import type { Ui } from './ui.ts';

export type ContextShown = ResultOf<typeof contextShow>;
export type ViewShown = ContextShown['views'][number];
export type Inspection = ResultOf<typeof contextInspect>;
type Settings = ViewShown['settings'];
type RankedFile = Inspection['files'][number];
type InstructionFile = NonNullable<Inspection['instructions']>[number];

/** Bytes for people: `512 B`, `1.5 KiB`, `4.0 MiB`. */
export function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1048576).toFixed(1)} MiB`;
  return `${(n / 1073741824).toFixed(1)} GiB`;
}

/** `12,345` for people, `12345` in plain output. */
const count = (n: number, rich: boolean): string => (rich ? n.toLocaleString('en-US') : String(n));

/** The settings fields in the order `show` prints them (and `set` takes them). */
export const SETTING_FIELDS = [
  'include',
  'exclude',
  'maxFileSize',
  'maxTotalSize',
  'maxFiles',
  'tokenBudget',
  'reserves',
  'ranking',
  'instructions',
] as const satisfies ReadonlyArray<keyof Settings>;
export type SettingField = (typeof SETTING_FIELDS)[number];

/** One setting's value: sizes in KiB/MiB and lists comma-separated for people; raw numbers in plain output. */
export function settingText(s: Settings, field: SettingField, rich: boolean): string {
  switch (field) {
    case 'include':
    case 'exclude':
      return s[field].length ? s[field].join(', ') : rich ? '(none)' : '';
    case 'maxFileSize':
    case 'maxTotalSize':
      return rich ? bytesText(s[field]) : String(s[field]);
    case 'maxFiles':
      return count(s.maxFiles, rich);
    case 'tokenBudget':
      return s.tokenBudget !== undefined
        ? count(s.tokenBudget, rich)
        : rich
          ? "the model's window minus the reserves"
          : 'window';
    case 'reserves':
      return `system ${count(s.reserves.system, rich)}, history ${count(s.reserves.history, rich)}, answer ${count(s.reserves.answer, rich)}`;
    case 'ranking':
      return s.ranking.length ? s.ranking.join(', ') : rich ? '(none)' : '';
    case 'instructions': {
      const i = s.instructions;
      if (!i) return rich ? '(this agent reads no instruction files)' : '';
      if (!rich)
        return `enabled=${i.enabled} maxFileSize=${i.maxFileSize} maxTokens=${i.maxTokens} files=${i.files.join(',')}`;
      if (!i.enabled) return 'off';
      const named = i.files.length ? `, also ${i.files.join(', ')}` : '';
      return `AGENTS.md, CLEVERAGENTS.md${named}; ${bytesText(i.maxFileSize)} a file, ${count(i.maxTokens, true)} tokens`;
    }
  }
}

/**
 * `show`: one row per view and field with its value and where it came from. Rich: a table under
 * a title; plain: `view field value source`, tab-separated.
 */
export function renderContextShown(r: { project?: string; revision?: number; views: ViewShown[] }, ui: Ui): string {
  const rows = r.views.flatMap((v) => SETTING_FIELDS.map((field) => ({ v, field })));
  const table = renderTable(
    rows,
    [
      { header: 'VIEW', value: (x) => x.v.view, style: (s) => ui.pal.bold(s) },
      { header: 'SETTING', value: (x) => x.field },
      { header: 'VALUE', value: (x) => settingText(x.v.settings, x.field, ui.rich) },
      {
        header: 'FROM',
        value: (x) => x.v.sources[x.field] ?? 'builtin',
        style: (s, x) => ((x.v.sources[x.field] ?? 'builtin') === 'builtin' ? ui.pal.dim(s) : ui.pal.cyan(s)),
      },
    ],
    ui.mode,
  );
  if (!ui.rich) return table;
  const title =
    r.project !== undefined
      ? `${ui.pal.bold('Context')} of ${r.project} ${ui.pal.dim(`(revision ${r.revision})`)}`
      : `${ui.pal.bold('Context')} defaults (every project starts from these)`;
  return `${title}\n${table}`;
}

const STATUS_WORD = (f: RankedFile): string => (f.included ? 'included' : (f.excludedBy ?? 'excluded'));

/** A file's score contributions: `goal-match +2.00 goal term 'date' in path; recency +0.50 …`. */
export const whyText = (f: RankedFile): string =>
  f.why.map((w) => `${w.strategy} ${w.score >= 0 ? '+' : ''}${w.score.toFixed(2)} ${w.reason}`).join('; ');

/** The budget line: what is allowed, where it came from, what is used. */
export function budgetText(i: Inspection, rich: boolean): string {
  const b = i.budget;
  const from =
    b.source === 'override'
      ? 'set by --budget'
      : b.source === 'view'
        ? `the ${i.view} view's tokenBudget`
        : `window ${count(b.modelWindow, rich)} − system ${count(b.reserves.system, rich)} − history ${count(b.reserves.history, rich)} − answer ${count(b.reserves.answer, rich)}`;
  return `${count(b.used, rich)} of ${count(b.available, rich)} tokens used (${from})`;
}

/** An instruction file's status: `included`, `included, truncated`, or why it was left out. */
export const instructionStatus = (f: InstructionFile): string =>
  f.included ? (f.truncated ? 'included, truncated' : 'included') : (f.excludedBy ?? 'left out');

/** The instruction files in a line: `2 files, 120 tokens; 1 left out (max-tokens 1)`. */
export function instructionsSummary(list: readonly InstructionFile[], rich: boolean): string {
  const read = list.filter((f) => f.included);
  const tokens = read.reduce((n, f) => n + f.tokens, 0);
  const left = list.filter((f) => !f.included);
  const why = new Map<string, number>();
  for (const f of left) why.set(f.excludedBy ?? 'left out', (why.get(f.excludedBy ?? 'left out') ?? 0) + 1);
  const reasons = [...why].map(([k, n]) => `${k} ${n}`).join(', ');
  return `${plural(read.length, 'file')}, ${count(tokens, rich)} tokens${left.length ? `; ${left.length} left out (${reasons})` : ''}`;
}

/** What each limit cut, in the order of the pipeline: `binary 1, max-file-size 1, token-budget 4`. */
export function cutText(cut: Inspection['cut']): string {
  const order = [
    'not-included',
    'excluded-glob',
    'binary',
    'unreadable',
    'max-file-size',
    'max-files',
    'max-total-size',
    'token-budget',
  ] as const;
  return order
    .filter((k) => (cut[k] ?? 0) > 0)
    .map((k) => `${k} ${cut[k]}`)
    .join(', ');
}

/** The summary's fields: goal, plan, budget, inventory, totals, what was cut, instructions, snapshot. */
function inspectionFields(i: Inspection, rich: boolean, est: string): Array<readonly [string, string | undefined]> {
  const t = i.totals;
  return [
    ['goal', i.goal || undefined],
    ['plan', i.planId],
    ['budget', budgetText(i, rich)],
    ...i.inventory.map(
      (r) =>
        [
          'inventory',
          `${r.resource}: ${plural(r.files, 'file')}, ${rich ? bytesText(r.bytes) : `${r.bytes} bytes`}`,
        ] as const,
    ),
    [
      'included',
      `${plural(t.included, 'file')}, ${est}${count(t.includedTokens, rich)} tokens, ${rich ? bytesText(t.includedBytes) : `${t.includedBytes} bytes`}`,
    ],
    ['excluded', plural(t.excluded, 'file')],
    ['cut', cutText(i.cut) || (rich ? 'nothing' : '')],
    ['instructions', i.instructions ? instructionsSummary(i.instructions, rich) : undefined],
    // Plain output: a line per instruction file (rich: a table of them).
    ...(rich
      ? []
      : (i.instructions ?? []).map(
          (f) =>
            [
              'instruction',
              `${f.path} (${f.resource}, ${f.bytes} bytes, ${est}${f.tokens} tokens, ${instructionStatus(f)}: ${f.why})`,
            ] as const,
        )),
    ['snapshot', i.snapshot],
  ];
}

/** One row per ranked file (a RESOURCE column when there are several). */
function filesTable(i: Inspection, ui: Ui, est: string, multi: boolean): string {
  const rich = ui.rich;
  return i.files.length
    ? renderTable(
        i.files,
        [
          ...(multi ? [{ header: 'RESOURCE', value: (f: RankedFile) => f.resource }] : []),
          { header: 'FILE', value: (f) => f.path, style: (s, f) => (f.included ? ui.pal.bold(s) : ui.pal.dim(s)) },
          { header: 'SIZE', value: (f) => (rich ? bytesText(f.bytes) : String(f.bytes)) },
          { header: 'TOKENS', value: (f) => `${est}${count(f.tokens, rich)}` },
          { header: 'SCORE', value: (f) => f.score.toFixed(2) },
          {
            header: 'STATUS',
            value: STATUS_WORD,
            style: (s, f) => (f.included ? ui.pal.green(s) : ui.pal.yellow(s)),
          },
          { header: 'WHY', value: whyText },
        ],
        ui.mode,
      )
    : '';
}

/** Rich output: the instruction files as a table, under the fields. */
function instructionsTable(i: Inspection, ui: Ui, est: string, multi: boolean): string {
  const rich = ui.rich;
  return i.instructions?.length
    ? `\n${renderTable(
        i.instructions,
        [
          ...(multi ? [{ header: 'RESOURCE', value: (f: InstructionFile) => f.resource }] : []),
          {
            header: 'INSTRUCTION FILE',
            value: (f) => f.path,
            style: (s, f) => (f.included ? ui.pal.bold(s) : ui.pal.dim(s)),
          },
          { header: 'SIZE', value: (f) => bytesText(f.bytes) },
          { header: 'TOKENS', value: (f) => `${est}${count(f.tokens, rich)}` },
          {
            header: 'STATUS',
            value: instructionStatus,
            style: (s, f) => (f.included ? ui.pal.green(s) : ui.pal.yellow(s)),
          },
          { header: 'WHY', value: (f) => f.why },
        ],
        ui.mode,
      )}`
    : '';
}

/**
 * `inspect` and `simulate`: the summary (budget, inventory, totals, what each limit cut) and one
 * row per ranked file — included ones first — with size, tokens, score, status and why.
 */
export function renderInspection(i: Inspection, ui: Ui): string {
  const rich = ui.rich;
  const est = i.dryRun && rich ? '~' : '';
  const t = i.totals;
  const fields = inspectionFields(i, rich, est);
  const multi = new Set(i.files.map((f) => f.resource)).size > 1;
  const table = filesTable(i, ui, est, multi);
  if (!rich)
    return `${renderFields([['project', i.project], ['view', i.view], ['dry run', String(i.dryRun)], ...fields], ui.mode)}${table}`;
  const title = `${ui.pal.bold('Context')} of ${i.project} ${ui.pal.dim(`· view ${i.view}`)}`;
  const instructions = instructionsTable(i, ui, est, multi);
  const listed =
    i.files.length < t.included + t.excluded
      ? ui.pal.dim(
          `(${i.files.length} of ${t.included + t.excluded} files listed: the included ones, then the best cut)\n`,
        )
      : '';
  return `${title}\n${renderFields(fields, ui.mode)}${instructions}${table ? `\n${table}${listed}` : ''}`;
}

import type { planArtifacts, planDiff, planStatus, planTree, ResultOf } from '../../../protocol/client/index.ts';
import type { Palette } from './colors.ts';
import { lastCommandFields } from './command-output.render.ts';
import { plural, whenText } from './definition.render.ts';
import { ruleText } from './policy.render.ts';
import { oneLine, renderFields, renderTable } from './table.ts';
import type { Ui } from './ui.ts';

/** What `plan status` returns. */
export type PlanStatus = ResultOf<typeof planStatus>;
/** One node of `plan tree` (a decision and the decisions under it). */
export type Decision = ResultOf<typeof planTree>['decisions'][number];
type PlanDiff = ResultOf<typeof planDiff>;
export type DiffFile = PlanDiff['sandboxes'][number]['files'][number];
export type DiffStats = PlanDiff['stats'];
export type ArtifactRow = ResultOf<typeof planArtifacts>['files'][number];

type Mode = { rich: boolean; pal: Palette };

/** `execute/complete`, coloured by how it went. */
export function phaseState(p: { phase: string; state: string }, pal: Palette): string {
  const s = `${p.phase}/${p.state}`;
  if (p.state === 'applied' || p.state === 'complete') return pal.green(s);
  if (p.state === 'errored' || p.state === 'cancelled') return pal.red(s);
  if (p.state === 'constrained' || p.state === 'queued') return pal.yellow(s);
  return pal.cyan(s);
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** A tool call or decision choice in one line: `builtin/edit-file path=a.ts find=x`. */
export function chosenText(chosen: Decision['chosen']): string {
  if (typeof chosen === 'string') return chosen;
  return `${chosen.tool} ${argsText(chosen.args)}`.trim();
}

export const argsText = (args: Record<string, unknown>): string =>
  Object.entries(args)
    .map(([k, v]) => {
      const text = oneLine(typeof v === 'string' ? v : JSON.stringify(v));
      return `${k}=${text.length > 60 ? `${text.slice(0, 59)}…` : text}`;
    })
    .join(' ');

/** The plan's profile and that its rules are the copy taken at `use`. */
export function profileText(s: Pick<PlanStatus, 'automationProfile' | 'policy'>): string {
  const p = s.policy;
  const rev = p.contentHash ? `, revision ${p.revision}` : '';
  return `${s.automationProfile} (rules as of plan use${rev}: default ${p.default}, ${plural(p.rules.length, 'rule')}, apply ${p.applyApproval ? 'asks' : 'without asking'}; later edits of the profile do not apply to this plan)`;
}

/** How the plan's commands run: network, and confinement (`none` stands out: the user turned it off). */
export function commandLines(s: PlanStatus, ui: Ui): Array<readonly [string, string]> {
  const network = s.network === 'allow' ? 'allowed' : 'none';
  const lines: Array<readonly [string, string]> = [['network', network]];
  if (s.confinement === 'none') {
    const text = 'NONE — commands ran unconfined (CLEVERAGENTS_CONFINEMENT=none)';
    lines.push(['confinement', ui.rich ? ui.pal.yellow(text) : text]);
  } else if (s.confinement === 'confined') lines.push(['confinement', 'confined (bubblewrap)']);
  return lines;
}

/** Everything `plan status` knows, for people. */
export function renderPlanStatus(s: PlanStatus, ui: Ui): string {
  const rich = ui.rich;
  const { checkpoints, sandboxes, error, waiting, applied, tasks, timing } = s;
  const fields: Array<readonly [string, string | undefined]> = [
    ['name', s.name],
    ['action', s.action],
    ['projects', s.projects.join(', ')],
    ['description', s.description],
    ['done when', s.definitionOfDone],
    ['profile', profileText(s)],
    ...s.policy.rules.map((r, i) => [`policy rule ${i + 1}`, ruleText(r)] as const),
    ...commandLines(s, ui),
    ['attempt', String(s.attempt)],
    ['progress', `${s.progress.stepsDone}/${s.progress.stepsTotal} steps`],
    ['running', rich ? (s.running ? 'yes' : undefined) : String(s.running)],
    ...(s.actors
      ? ([
          ['strategy actor', `${s.actors.strategy} (from ${s.actors.source.strategy})`],
          ['execution actor', `${s.actors.execution} (from ${s.actors.source.execution})`],
        ] as const)
      : []),
    ...(s.actors
      ? (s.invariants ?? []).map((i) => ['invariant', `${i.text} (${i.source}${i.from ? ` ${i.from}` : ''})`] as const)
      : []),
    ['verify', s.verify ? `${s.verify.command} (from ${s.verify.source})` : undefined],
    ['done', doneText(s, ui)],
    ['usage', usageText(s)],
    [
      'error',
      error ? `${error.message}${rich && error.hint ? `\n${ui.pal.dim(`hint: ${error.hint}`)}` : ''}` : undefined,
    ],
    ...(!rich && error?.hint ? [['error hint', error.hint] as const] : []),
    ...(error?.files ?? []).map((f) => ['error file', f] as const),
    ...lastCommandFields(s, ui),
    ['waiting', waiting ? `${waiting.kind} on task ${waiting.taskId}` : undefined],
    ...sandboxes.map((b) => ['sandbox', `${b.resource}: ${b.root}${b.branch ? ` (branch ${b.branch})` : ''}`] as const),
    ...checkpoints.map(
      (c) =>
        [
          'checkpoint',
          rich
            ? `${c.id}  ${c.label} ${ui.pal.dim(`(step ${c.stepIndex}, ${whenText(c.createdAt, true)})`)}`
            : `${c.id} ${c.label} ${c.stepIndex}`,
        ] as const,
    ),
    ...(applied?.commits ?? []).map(
      (c) =>
        [
          'applied',
          `${c.resource}: ${c.commit ? `commit ${rich ? c.commit.slice(0, 12) : c.commit}` : 'no commit'} (${plural(c.files.length, 'file')})`,
        ] as const,
    ),
    ...Object.entries(tasks).map(([phase, id]) => [`${phase} task`, id] as const),
    ['created', whenText(timing.createdAt, rich)],
    ['updated', whenText(timing.updatedAt, rich)],
    ['allowed', s.allowed.length ? s.allowed.join(', ') : rich ? 'nothing (the plan is finished)' : ''],
  ];
  if (!rich) return renderFields([['plan', s.planId], ['phase', s.phase], ['state', s.state], ...fields], ui.mode);
  return `${ui.pal.bold('Plan')} ${s.planId}  ${phaseState(s, ui.pal)}\n${renderFields(fields, ui.mode)}`;
}

/** Usage against every budget the plan has. */
export function usageText(s: Pick<PlanStatus, 'usage' | 'budget'>): string {
  const { usage: u, budget: b } = s;
  const parts = [
    `${plural(u.toolCalls, 'tool call')} of ${b.maxToolCalls}`,
    `${seconds(u.wallMs)} of ${b.maxWallSeconds} s`,
    `${u.tokens} tokens${b.maxTokens ? ` of ${b.maxTokens}` : ''}`,
  ];
  if (u.costUsd > 0 || b.maxCost) parts.push(`cost ${u.costUsd.toFixed(4)}${b.maxCost ? ` of ${b.maxCost}` : ''}`);
  return parts.join(', ');
}

/** Whether the plan met its definition of done (said before anyone applies it). */
export function doneText(s: Pick<PlanStatus, 'done'>, ui: Ui): string | undefined {
  const d = s.done;
  if (!d) return undefined;
  const how =
    d.by === 'verify' && d.verify
      ? `verify \`${d.verify.command}\` ${d.verify.ok ? 'passed' : `failed (exit ${d.verify.exitCode ?? 'killed'})`}`
      : `the execution actor's assessment${d.assessment ? `: ${oneLine(d.assessment).slice(0, 200)}` : ''}`;
  const text = d.met ? `met — ${how}` : `NOT met — ${how}`;
  return ui.rich ? (d.met ? ui.pal.green(text) : ui.pal.yellow(text)) : text;
}

/** The decision tree: indented in rich mode; one tab-separated line per decision in plain mode. */
export function renderTree(roots: Decision[], mode: Mode): string {
  const out: string[] = [];
  const walk = (d: Decision, depth: number): void => {
    const state = d.superseded ? 'superseded' : 'active';
    if (mode.rich) {
      const pal = mode.pal;
      const text = `${'  '.repeat(depth)}${depth ? '└ ' : ''}${pal.bold(d.type)} ${d.question} ${pal.dim('→')} ${chosenText(d.chosen)}`;
      const meta = pal.dim(
        `  ${d.id} · attempt ${d.attempt}${d.confidence !== undefined && d.confidence < 1 ? ` · confidence ${d.confidence}` : ''}`,
      );
      out.push(d.superseded ? `${pal.dim(`${text} (superseded)`)}${meta}` : `${text}${meta}`);
    } else {
      out.push(
        [
          d.id,
          String(depth),
          d.type,
          String(d.attempt),
          state,
          oneLine(d.question),
          oneLine(chosenText(d.chosen)),
        ].join('\t'),
      );
    }
    for (const c of d.children) walk(c, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return out.length ? `${out.join('\n')}\n` : '';
}

/** A unified diff, coloured in rich mode. */
/** What a line of a unified diff is: a header, an added or removed line, a hunk header, or context. */
export type DiffLineKind = 'head' | 'add' | 'del' | 'hunk' | 'context';

export function diffLineKind(l: string): DiffLineKind {
  if (l.startsWith('+++') || l.startsWith('---') || l.startsWith('diff ') || l.startsWith('index ')) return 'head';
  if (l.startsWith('+')) return 'add';
  if (l.startsWith('-')) return 'del';
  if (l.startsWith('@@')) return 'hunk';
  return 'context';
}

export function renderDiff(unified: string, mode: Mode): string {
  if (!unified) return '';
  const text = unified.endsWith('\n') ? unified : `${unified}\n`;
  if (!mode.rich || !mode.pal.enabled) return text;
  const { pal } = mode;
  const style: Record<DiffLineKind, (l: string) => string> = {
    head: (l) => pal.bold(l),
    add: (l) => pal.green(l),
    del: (l) => pal.red(l),
    hunk: (l) => pal.cyan(l),
    context: (l) => l,
  };
  return text
    .split('\n')
    .map((l) => style[diffLineKind(l)](l))
    .join('\n');
}

/** Per-file stats and the total, like `git diff --stat`. */
export function renderStat(files: DiffFile[], stats: DiffStats, mode: Mode): string {
  const total = `${plural(stats.files, 'file')} changed, ${plural(stats.additions, 'insertion')}(+), ${plural(stats.deletions, 'deletion')}(-)`;
  if (!mode.rich)
    return `${files.map((f) => `${f.path}\t${f.status}\t+${f.additions}\t-${f.deletions}\n`).join('')}total\t${stats.files}\t+${stats.additions}\t-${stats.deletions}\n`;
  const { pal } = mode;
  const w = Math.max(0, ...files.map((f) => f.path.length));
  const lines = files.map(
    (f) =>
      ` ${f.path.padEnd(w)} | ${pal.green(`+${f.additions}`)} ${pal.red(`-${f.deletions}`)}${f.status !== 'modified' ? pal.dim(` (${f.status})`) : ''}`,
  );
  return `${[...lines, ` ${total}`].join('\n')}\n`;
}

export function renderArtifacts(rows: ArtifactRow[], ui: Ui): string {
  const size = (n: number): string =>
    !ui.rich
      ? String(n)
      : n < 1024
        ? `${n} B`
        : n < 1024 * 1024
          ? `${(n / 1024).toFixed(1)} KiB`
          : `${(n / 1048576).toFixed(1)} MiB`;
  const multi = new Set(rows.map((r) => r.resource)).size > 1;
  return renderTable(
    rows,
    [
      ...(multi ? [{ header: 'RESOURCE', value: (r: ArtifactRow) => r.resource }] : []),
      { header: 'PATH', value: (r) => r.path, style: (s) => ui.pal.bold(s) },
      {
        header: 'CHANGE',
        value: (r) => r.change,
        style: (s, r) =>
          r.change === 'deleted' ? ui.pal.red(s) : r.change === 'written' ? ui.pal.green(s) : ui.pal.yellow(s),
      },
      { header: 'SIZE', value: (r) => (r.binary && ui.rich ? `${size(r.size)} (binary)` : size(r.size)) },
      { header: '+', value: (r) => `+${r.additions}`, style: (s) => ui.pal.green(s) },
      { header: '-', value: (r) => `-${r.deletions}`, style: (s) => ui.pal.red(s) },
    ],
    ui.mode,
  );
}

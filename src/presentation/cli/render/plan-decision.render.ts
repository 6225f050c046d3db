import { shownOutput, type planCorrect, type planExplain, type ResultOf } from '../../../protocol/client/index.ts';
import { CliError } from '../exit-codes.ts';
import { outputFields, wholeOutputCommand } from './command-output.render.ts';
import { renderYaml } from './definition.render.ts';
import { chosenText } from './plan.render.ts';
import { verdictText } from './policy.render.ts';
import { renderFields } from './table.ts';
import type { Ui } from './ui.ts';

/** One decision for `plan explain`: what, why, its context, tool calls and checkpoint. */
/** A context snapshot reference as a decision keeps it (ContextSnapshotRef). */
interface SnapshotRef {
  snapshot: string;
  view: string;
  project: string;
  files: Array<{ resource: string; path: string; tokens: number; score: number }>;
  instructions?: Array<{ resource: string; path: string; tokens: number; why: string }>;
  tokens: number;
  budget: number;
}

function snapshotOf(context: Record<string, unknown>): SnapshotRef | undefined {
  const s = context['snapshot'] as Partial<SnapshotRef> | undefined;
  return s && typeof s.snapshot === 'string' && Array.isArray(s.files) ? (s as SnapshotRef) : undefined;
}

/** An alternative an actor weighed: `{option, reason}`, or whatever a stepped decision kept. */
function alternativeText(a: unknown): string {
  if (a && typeof a === 'object' && 'option' in a) {
    const { option, reason } = a as { option: unknown; reason?: unknown };
    const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
    return `${text(option)}${reason ? ` — not chosen: ${text(reason)}` : ''}`;
  }
  return typeof a === 'string' ? a : JSON.stringify(a);
}

export function renderExplain(r: ResultOf<typeof planExplain>, ui: Ui, showContext = false): string {
  const { decision: d, parent, children, toolCalls: calls, checkpointAfter: cp } = r;
  const fields: Array<readonly [string, string | undefined]> = [
    ['plan', r.planId],
    ['type', d.type],
    ['question', d.question],
    ['chosen', chosenText(d.chosen)],
    ['rationale', d.rationale],
    ['confidence', String(d.confidence)],
    ['attempt', String(d.attempt)],
    ['superseded', ui.rich ? (d.superseded ? 'yes' : undefined) : String(d.superseded)],
    ['parent', parent ? `${parent.id} ${parent.question}` : undefined],
    ...children.map((c) => ['child', `${c.id} ${c.type}: ${c.question}`] as const),
    // Each call, what its automation profile decided about it, and a command's output.
    ...calls.flatMap((c) => [
      [
        'tool call',
        `${c.tool} ${c.ok ? 'ok' : 'FAILED'}: ${c.summary} (${c.durationMs} ms)${c.filesTouched.length ? ` — ${c.filesTouched.join(', ')}` : ''}`,
      ] as const,
      ...(c.policy ? [['policy', verdictText(c.policy)] as const] : []),
      ...(c.output ? outputFields(c.output, wholeOutputCommand(r.planId, d.id), ui) : []),
    ]),
    ['checkpoint', cp ? `${cp.id} ${cp.label}` : undefined],
    ...d.alternatives.map((a, i) => [`alternative ${i + 1}`, alternativeText(a)] as const),
  ];
  const snap = snapshotOf(d.context);
  if (snap)
    fields.push([
      'context seen',
      `snapshot ${snap.snapshot.replace(/^sha256:/, '').slice(0, 12)}: ${snap.files.length} files of project ${snap.project}, ${snap.tokens} of ${snap.budget} tokens (view ${snap.view})${showContext ? '' : ' — --show-context lists them'}`,
    ]);
  if (snap && showContext)
    fields.push(
      ...(snap.instructions ?? []).map(
        (f) => ['context instruction', `${f.path} (${f.resource}, ${f.tokens} tokens, ${f.why})`] as const,
      ),
      ...snap.files.map(
        (f) => ['context file', `${f.path} (${f.resource}, ${f.tokens} tokens, score ${f.score})`] as const,
      ),
    );
  const { snapshot: _seen, ...rest } = d.context;
  const context = Object.keys(rest).length ? rest : undefined;
  const tail = context ? `${ui.rich ? ui.pal.bold('context') : 'context:'}\n${renderYaml(context, ui.mode)}` : '';
  if (!ui.rich) return `${renderFields([['decision', d.id], ...fields], ui.mode)}${tail}`;
  return `${ui.pal.bold('Decision')} ${d.id}\n${renderFields(fields, ui.mode)}${tail}`;
}

/**
 * `plan explain --output`: the whole output of the decision's command, as kept — as the command
 * wrote it when piped, without control sequences on a terminal (the output is the sandboxed
 * command's to choose). Several calls (an actor's decision): each under a line naming it.
 */
export function wholeOutput(r: ResultOf<typeof planExplain>, ui: Ui): string {
  const calls = r.toolCalls.filter((c) => c.output);
  if (calls.length === 0)
    throw new CliError(
      `decision ${r.decision.id} kept no command output: ${r.toolCalls.length ? 'its calls ran no command (or ran before plans kept output)' : 'it made no tool call'}`,
      'NOT_FOUND',
      'NotFoundError',
      `see what it did with agents plan explain ${r.decision.id} --plan ${r.planId}`,
    );
  const text = (t: string): string => {
    const shown = ui.rich ? shownOutput(t) : t;
    return shown === '' || shown.endsWith('\n') ? shown : `${shown}\n`;
  };
  if (calls.length === 1) return text(calls[0]?.output?.text ?? '');
  return calls
    .map(
      (c) =>
        `${ui.rich ? ui.pal.dim(`── ${c.tool}: ${c.summary}`) : `── ${c.tool}: ${c.summary}`}\n${text(c.output?.text ?? '')}`,
    )
    .join('');
}

/** What `plan correct` did (or, with --dry-run, would do). */
export function renderCorrection(r: ResultOf<typeof planCorrect>, ui: Ui): string {
  const ids = (list: string[]): string[] => list.filter(Boolean);
  const { planId } = r;
  if ('dryRun' in r) {
    const fields: Array<readonly [string, string | undefined]> = [
      ['mode', r.mode],
      ...ids(r.wouldSupersede).map((id) => ['would supersede', id] as const),
      ['would restore', r.wouldRestoreCheckpoint || undefined],
      ['would resume at step', r.wouldResumeAtStep !== undefined ? String(r.wouldResumeAtStep) : undefined],
      ['would add', r.wouldAdd],
      ['note', r.note],
    ];
    return ui.rich
      ? `${ui.pal.bold('Dry run')}: nothing changed in plan ${planId}\n${renderFields(fields, ui.mode)}`
      : renderFields([['plan', planId], ['dry-run', 'true'], ...fields], ui.mode);
  }
  const fields: Array<readonly [string, string | undefined]> = [
    ['mode', r.mode],
    ['attempt', String(r.attempt)],
    ...ids(r.superseded).map((id) => ['superseded', id] as const),
    ...ids(r.added).map((id) => ['added', id] as const),
    ['restored', r.restoredCheckpoint || undefined],
    ['resume at step', r.resumeAtStep !== undefined ? String(r.resumeAtStep) : undefined],
    ['re-planned on task', r.taskId],
    ['note', r.note],
    [
      'next',
      r.mode === 'revert' ? `agents plan tree ${planId} ; agents plan execute ${planId}` : `agents plan tree ${planId}`,
    ],
  ];
  return ui.rich
    ? `${ui.pal.bold('Corrected')} plan ${planId}\n${renderFields(fields, ui.mode)}`
    : renderFields([['plan', planId], ...fields], ui.mode);
}

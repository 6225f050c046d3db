import { renderYaml } from './definition.js';
import { chosenText, type Decision } from './plan.js';
import { verdictText, type VerdictLine } from './policy.js';
import { renderFields } from './table.js';
import type { Ui } from './ui.js';

/** One decision for `plan explain`: what, why, its context, tool calls and checkpoint. */
export function renderExplain(r: Record<string, unknown>, ui: Ui): string {
  const d = r['decision'] as Decision;
  const parent = r['parent'] as Decision | undefined;
  const children = (r['children'] ?? []) as Decision[];
  const calls = (r['toolCalls'] ?? []) as Array<{
    tool: string;
    ok: boolean;
    summary: string;
    durationMs: number;
    filesTouched: string[];
    checkpointId?: string;
    policy?: VerdictLine;
  }>;
  const cp = r['checkpointAfter'] as { id: string; label: string } | undefined;
  const fields: Array<readonly [string, string | undefined]> = [
    ['plan', String(r['planId'] ?? '')],
    ['type', d.type],
    ['question', d.question],
    ['chosen', chosenText(d.chosen)],
    ['rationale', d.rationale],
    ['confidence', d.confidence !== undefined ? String(d.confidence) : undefined],
    ['attempt', String(d.attempt)],
    ['superseded', ui.rich ? (d.superseded ? 'yes' : undefined) : String(d.superseded)],
    ['parent', parent ? `${parent.id} ${parent.question}` : undefined],
    ...children.map((c) => ['child', `${c.id} ${c.type}: ${c.question}`] as const),
    // Each call, then what its automation profile decided about it.
    ...calls.flatMap((c) => [
      [
        'tool call',
        `${c.tool} ${c.ok ? 'ok' : 'FAILED'}: ${c.summary} (${c.durationMs} ms)${c.filesTouched.length ? ` — ${c.filesTouched.join(', ')}` : ''}`,
      ] as const,
      ...(c.policy ? [['policy', verdictText(c.policy)] as const] : []),
    ]),
    ['checkpoint', cp ? `${cp.id} ${cp.label}` : undefined],
  ];
  const context = d.context && Object.keys(d.context).length ? d.context : undefined;
  const alternatives = d.alternatives?.length ? d.alternatives : undefined;
  const tail = `${context ? `${ui.rich ? ui.pal.bold('context') : 'context:'}\n${renderYaml(context, ui.mode)}` : ''}${alternatives ? `${ui.rich ? ui.pal.bold('alternatives') : 'alternatives:'}\n${renderYaml(alternatives, ui.mode)}` : ''}`;
  if (!ui.rich) return `${renderFields([['decision', d.id], ...fields], ui.mode)}${tail}`;
  return `${ui.pal.bold('Decision')} ${d.id}\n${renderFields(fields, ui.mode)}${tail}`;
}

/** What `plan correct` did (or, with --dry-run, would do). */
export function renderCorrection(r: Record<string, unknown>, ui: Ui): string {
  const ids = (k: string): string[] => ((r[k] ?? []) as string[]).filter(Boolean);
  const planId = String(r['planId'] ?? '');
  if (r['dryRun']) {
    const fields: Array<readonly [string, string | undefined]> = [
      ['mode', String(r['mode'])],
      ...ids('wouldSupersede').map((id) => ['would supersede', id] as const),
      ['would restore', r['wouldRestoreCheckpoint'] ? String(r['wouldRestoreCheckpoint']) : undefined],
      ['would resume at step', r['wouldResumeAtStep'] !== undefined ? String(r['wouldResumeAtStep']) : undefined],
    ];
    return ui.rich
      ? `${ui.pal.bold('Dry run')}: nothing changed in plan ${planId}\n${renderFields(fields, ui.mode)}`
      : renderFields([['plan', planId], ['dry-run', 'true'], ...fields], ui.mode);
  }
  const fields: Array<readonly [string, string | undefined]> = [
    ['mode', String(r['mode'])],
    ['attempt', String(r['attempt'])],
    ...ids('superseded').map((id) => ['superseded', id] as const),
    ...ids('added').map((id) => ['added', id] as const),
    ['restored', r['restoredCheckpoint'] ? String(r['restoredCheckpoint']) : undefined],
    ['resume at step', r['resumeAtStep'] !== undefined ? String(r['resumeAtStep']) : undefined],
    ['next', r['mode'] === 'revert' ? `agents plan execute ${planId}` : `agents plan tree ${planId}`],
  ];
  return ui.rich
    ? `${ui.pal.bold('Corrected')} plan ${planId}\n${renderFields(fields, ui.mode)}`
    : renderFields([['plan', planId], ...fields], ui.mode);
}

import { compactionLine, compactionOf, usedCompactionOf } from '../cli/render/compaction.render.ts';
import type { ErrorReport } from '../cli/render/error.render.ts';
import { chosenText, diffLineKind } from '../cli/render/plan.render.ts';
import {
  fallbackOf,
  hookRunLine,
  hookRunOf,
  messageWords,
  partsText,
  stateWord,
  toolCallLine,
  toolCallOf,
  isCommandOutput,
  usageLine,
  usageOf,
} from '../cli/render/task.render.ts';
import { approvalWhat, outputTail, shownOutput } from '../../protocol/client/index.ts';
import { flattenTree, type Decision, type PlanPane, type SystemAnswer, type Turn } from './state.ts';

/** What a line is, for its colour (none under NO_COLOR: the words and marks carry the meaning). */
export type Tone = 'user' | 'agent' | 'tool' | 'meta' | 'warn' | 'error' | 'ok' | 'add' | 'del' | 'hunk' | 'head';

export interface Line {
  text: string;
  tone?: Tone | undefined;
}

/** Cuts text into lines of at most `width` columns (hard breaks kept, long lines wrapped). */
export function wrap(text: string, width: number, tone?: Tone): Line[] {
  const w = Math.max(1, width);
  const out: Line[] = [];
  for (const raw of text.replace(/\t/g, '  ').split('\n')) {
    const chars = [...raw];
    if (chars.length === 0) out.push({ text: '', tone });
    for (let i = 0; i < chars.length; i += w) out.push({ text: chars.slice(i, i + w).join(''), tone });
  }
  return out;
}

/** One line cut to `width` columns, with `…` when cut. */
export const truncate = (text: string, width: number): string => {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
};

export const errorLines = (r: ErrorReport): string[] => [
  `error: ${r.message}${r.type !== 'Error' && r.type !== 'UsageError' ? ` (${r.type})` : ''}`,
  ...(r.fields ?? []).map((f) => `  ${f.field}: ${f.description}`),
  ...(r.hint ? [`hint: ${r.hint}`] : []),
];

/** How many of a command's last output lines the chat pane shows under its tool line. */
const OUTPUT_LINES = 6;

/** A turn for the chat pane: what was asked, the answer and tool calls in the order they came, then how it ended. */
export function turnLines(turn: Turn, width: number): Line[] {
  if (turn.system) return systemLines(turn.system, width);
  const out: Line[] = [];
  const t = turn.task;
  const compaction = t ? compactionOf(t) : undefined;
  if (compaction) return wrap(compactionLine(compaction), width, 'meta');
  const asked = turn.recap ? partsText(t?.history?.find((m) => m.role === 'ROLE_USER')?.parts ?? []) : turn.input;
  out.push(...wrap(`you › ${asked}`, width, 'user'));
  let answered = false;
  for (const a of t?.artifacts ?? []) {
    const call = toolCallOf(a);
    const run = call ? undefined : hookRunOf(a);
    if (call || run) {
      const line = call ? toolCallLine(call) : run ? hookRunLine(run) : '';
      const tone: Tone = call?.state === 'running' ? 'tool' : call && !call.ok ? 'warn' : 'tool';
      out.push(...wrap(`  ${line}`, width, tone));
      continue;
    }
    const text = partsText(a.parts);
    if (!text) continue;
    if (isCommandOutput(a)) {
      // A command's output under its tool line: its last lines, as a terminal would show them.
      const tail = shownOutput(text).trimEnd().split('\n').slice(-OUTPUT_LINES);
      for (const l of tail) out.push(...wrap(`    ${l}`, width, 'meta'));
      continue;
    }
    out.push(...wrap(`${answered ? '' : 'agent › '}${text}`, width, 'agent'));
    answered = true;
  }
  if (t) {
    const state = t.status.state;
    const words = messageWords(t.status.message);
    if (state === 'TASK_STATE_COMPLETED') {
      const usage = usageOf(t);
      if (usage) out.push(...wrap(`  ${usageLine(usage)}`, width, 'meta'));
    } else if (state === 'TASK_STATE_WORKING' || state === 'TASK_STATE_SUBMITTED') {
      // What the agent says it is doing (e.g. compacting the session's older turns), as the CLI prints it.
      if (words) out.push(...wrap(`  · ${stateWord(state)}: ${words}`, width, 'meta'));
    } else {
      const tone: Tone = state === 'TASK_STATE_INPUT_REQUIRED' ? 'warn' : 'error';
      out.push(...wrap(`  ${stateWord(state)}${words ? `: ${words}` : ''}`, width, tone));
    }
    const used = usedCompactionOf(t);
    if (used)
      out.push(
        ...wrap(
          `  context: the summary of ${used.covers.length} earlier turns (compaction ${used.taskId})`,
          width,
          'meta',
        ),
      );
    const fallback = fallbackOf(t);
    if (fallback) out.push(...wrap(`  ${fallback}`, width, 'meta'));
  }
  if (turn.error) for (const l of errorLines(turn.error)) out.push(...wrap(`  ${l}`, width, 'error'));
  return out;
}

/** A chat command's answer: the command as typed, then what it said (a diff coloured as one). */
export function systemLines(a: SystemAnswer, width: number): Line[] {
  const body = a.text.replace(/\n$/, '');
  return [
    ...wrap(`› ${a.command}`, width, 'meta'),
    ...(a.diff ? diffLines(body, width) : body.split('\n').flatMap((l) => wrap(`  ${l}`, width, 'meta'))),
  ];
}

/** The plan view without its diff: phase and state, what it waits for, the tree, the log, the checkpoints. */
export function planLines(p: PlanPane, width: number): Line[] {
  const s = p.status;
  if (!s) return [{ text: 'loading the plan…', tone: 'meta' }];
  const out: Line[] = [];
  const push = (text: string, tone?: Tone): void => void out.push(...wrap(text, width, tone));
  push(
    `Plan ${s.planId}  ${s.phase}/${s.state}${s.running ? ' (running)' : ''}  ${s.action} on ${s.projects.join(', ')}`,
    'head',
  );
  push(
    `steps ${s.progress.stepsDone}/${s.progress.stepsTotal} · attempt ${s.attempt} · allowed: ${s.allowed.join(', ') || 'nothing'}`,
    'meta',
  );
  // What landed: the commit the apply made on each project (or that nothing did).
  if (s.applied) {
    if (s.applied.commits.length === 0) push('applied: nothing (no file changed, no commit)', 'meta');
    for (const c of s.applied.commits)
      push(
        `applied to ${c.resource}: ${c.commit ? `commit ${c.commit.slice(0, 12)}` : 'no commit'} (${c.files.length} file${c.files.length === 1 ? '' : 's'})`,
        'ok',
      );
  }
  if (s.error) {
    push(`error: ${s.error.message}`, 'error');
    if (s.error.hint) push(`hint: ${s.error.hint}`, 'error');
  }
  if (s.waiting) {
    // The plan keeps the request its task asked with.
    const r = s.waiting.request;
    push(`Approval needed: ${approvalWhat(r)}  [y] approve · [n] reject · [g] reject with guidance`, 'warn');
    if (typeof r.preview === 'string')
      for (const l of r.preview.split('\n').slice(0, 12)) out.push(...diffLine(l, width));
  }
  push('Decisions', 'head');
  const flat = flattenTree(p.decisions);
  if (flat.length === 0) push('  (none yet)', 'meta');
  flat.forEach(({ d, depth }, i) => {
    const sel = i === p.selected;
    const mark = sel ? '›' : ' ';
    const what = d.type === 'choice' ? `${d.question} → ${chosenText(d.chosen)}` : chosenText(d.chosen);
    out.push({
      text: truncate(`${mark} ${'  '.repeat(depth)}${d.type}: ${what}`, width),
      tone: sel ? 'user' : undefined,
    });
  });
  push('Execution log', 'head');
  if (p.log.length === 0) push('  (no tool calls yet)', 'meta');
  for (const c of p.log) {
    const files = c.filesTouched.length ? ` [${c.filesTouched.join(', ')}]` : '';
    push(`  ${c.ok ? '✓' : '✗'} ${c.tool}: ${c.summary}${files}`, c.ok ? 'ok' : 'error');
  }
  out.push(...outputLines(p, flat[p.selected]?.d, width));
  push('Checkpoints', 'head');
  if (s.checkpoints.length === 0) push('  (none yet)', 'meta');
  for (const c of s.checkpoints) push(`  ${c.id}  ${c.label} (after step ${c.stepIndex})`, 'meta');
  return out;
}

/**
 * The output of the selected step's command (its last lines, from the execution log); when the
 * selected decision ran none, the plan's last command's.
 */
function outputLines(p: PlanPane, selected: Decision | undefined, width: number): Line[] {
  const s = p.status;
  if (!s) return [];
  const own = selected && p.log.filter((c) => c.decisionId === selected.id && c.outputTail !== undefined).at(-1);
  const last = s.lastCommand;
  const shown =
    own && selected
      ? {
          title: `Output of the selected step${selected.stepIndex !== undefined ? ` ${selected.stepIndex + 1}` : ''}`,
          tail: own.outputTail ?? '',
          ok: own.ok,
          decisionId: selected.id,
        }
      : last
        ? {
            title: `Output of the last command${last.step !== undefined ? ` (step ${last.step})` : ''}`,
            tail: outputTail(last.output.text).text,
            ok: last.ok,
            decisionId: last.decisionId,
          }
        : undefined;
  if (!shown) return [];
  const out = wrap(shown.title, width, 'head');
  if (shown.tail === '') out.push(...wrap('  (no output)', width, 'meta'));
  else for (const l of shown.tail.split('\n')) out.push(...wrap(`  ${l}`, width, shown.ok ? undefined : 'error'));
  out.push(...wrap(`  all of it: agents plan explain ${shown.decisionId} --plan ${s.planId} --output`, width, 'meta'));
  return out;
}

/** A diff line, toned by what it is (+ added, - removed, @@ hunk, headers). */
export function diffLine(l: string, width: number): Line[] {
  const kind = diffLineKind(l);
  return wrap(l, width, kind === 'context' ? undefined : kind);
}

export const diffLines = (unified: string | undefined, width: number): Line[] =>
  (unified ?? '')
    .replace(/\n$/, '')
    .split('\n')
    .flatMap((l) => diffLine(l, width));

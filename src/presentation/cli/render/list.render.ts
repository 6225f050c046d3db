import type { ResultOf, sessionList } from '../../../protocol/client/index.ts';
import type { Palette } from './colors.ts';
import { phaseState, type PlanStatus } from './plan.render.ts';
import { oneLine, renderTable, type Column } from './table.ts';

/** A list in table mode fits this many columns when the terminal's width is not known (a pipe, a log). */
export const LIST_WIDTH = 80;
/** Ids are ULIDs: 8 characters still read as one, and every command accepts a unique prefix of 4 or more. */
export const MIN_SHOWN_ID = 8;

/** A session as `session list` returns it (with its first message). */
export type SessionListItem = ResultOf<typeof sessionList>['sessions'][number];

interface ListMode {
  rich: boolean;
  pal: Palette;
  width: number | undefined;
}

/**
 * The shortest prefix of each id, at least `min` characters, that no other id in the list shares
 * (what the user can type back; the server still refuses a prefix another of their ids shares).
 */
export function shortIds(ids: readonly string[], min = MIN_SHOWN_ID): Map<string, string> {
  const sorted = [...new Set(ids)].sort();
  const out = new Map<string, string>();
  sorted.forEach((id, i) => {
    const common = (other: string | undefined): number => {
      if (other === undefined) return 0;
      let n = 0;
      while (n < id.length && id[n] === other[n]) n++;
      return n;
    };
    const needed = Math.max(common(sorted[i - 1]), common(sorted[i + 1])) + 1;
    out.set(id, id.slice(0, Math.max(min, needed)));
  });
  return out;
}

/** `text` on one line, at most `max` characters (the cut marked with `…`). */
export function clip(text: string, max: number): string {
  const line = oneLine(text);
  return line.length > max ? `${line.slice(0, Math.max(0, max - 1))}…` : line;
}

/**
 * The table with its last column clipped so that every line fits `width` (renderTable alone keeps
 * a last column it would have to cut below 24 characters; a list must fit, so it gets what is left).
 */
function fitted<T>(rows: readonly T[], columns: Column<T>[], mode: ListMode): string {
  const width = mode.width ?? LIST_WIDTH;
  const fixed = columns.slice(0, -1);
  const before = fixed.reduce(
    (sum, c) => sum + Math.max(c.header.length, ...rows.map((r) => oneLine(c.value(r)).length)) + 2,
    0,
  );
  const last = columns.at(-1);
  if (!last) return renderTable(rows, columns, { ...mode, width });
  const room = Math.max(MIN_LAST_COLUMN, width - before);
  return renderTable(rows, [...fixed, { ...last, value: (r: T) => clip(last.value(r), room) }], { ...mode, width });
}

/** What the last column keeps even on a terminal too narrow for the rest: a line may then wrap. */
const MIN_LAST_COLUMN = 10;

/** `2026-03-01T10:00:00.000Z` → `03-01 10:00`: a list's time, short enough to leave room for what matters. */
const listTime = (ts: string): string => ts.replace(/^\d{4}-(\d\d-\d\d)T(\d\d:\d\d).*$/, '$1 $2');

/** What a plan does: its description (the goal, or the action's description) and any argument it does not show. */
export function planSummary(p: Pick<PlanStatus, 'description' | 'arguments' | 'name'>): string {
  const text = p.description || p.name;
  const unseen = Object.entries(p.arguments)
    .filter(([, v]) => !text.includes(String(v)))
    .map(([k, v]) => `${k}=${String(v)}`);
  return unseen.length ? `${text} (${unseen.join(', ')})` : text;
}

/**
 * `plan list`. Table mode (rich): short ids and what each plan does, clipped to the terminal (80
 * columns when it is not one). Plain: the full ids and every column, tab-separated, as before, with
 * what the plan does last.
 */
export function renderPlanList(plans: readonly PlanStatus[], mode: ListMode): string {
  if (!mode.rich) {
    const plain: Column<PlanStatus>[] = [
      { header: 'ID', value: (p) => p.planId },
      { header: 'PHASE/STATE', value: (p) => `${p.phase}/${p.state}` },
      { header: 'STEPS', value: (p) => `${p.progress.stepsDone}/${p.progress.stepsTotal}` },
      { header: 'ACTION', value: (p) => p.action },
      { header: 'PROJECTS', value: (p) => p.projects.join(',') },
      { header: 'UPDATED', value: (p) => p.timing.updatedAt },
      { header: 'NAME', value: (p) => p.name },
      { header: 'WHAT', value: planSummary },
    ];
    return renderTable(plans, plain, mode);
  }
  const ids = shortIds(plans.map((p) => p.planId));
  const columns: Column<PlanStatus>[] = [
    { header: 'ID', value: (p) => ids.get(p.planId) ?? p.planId },
    { header: 'PHASE/STATE', value: (p) => `${p.phase}/${p.state}`, style: (_t, p) => phaseState(p, mode.pal) },
    { header: 'STEPS', value: (p) => `${p.progress.stepsDone}/${p.progress.stepsTotal}` },
    { header: 'UPDATED', value: (p) => listTime(p.timing.updatedAt) },
    { header: 'WHAT', value: planSummary },
  ];
  return fitted(plans, columns, mode);
}

/**
 * `session list`. Table mode (rich): short ids, the project, and the message that opened each
 * session (its title when it has none yet), clipped to the terminal (80 columns when it is not one).
 */
export function renderSessionList(sessions: readonly SessionListItem[], mode: ListMode): string {
  const opening = (s: SessionListItem): string => s.firstMessage ?? s.title ?? '';
  if (!mode.rich) {
    const plain: Column<SessionListItem>[] = [
      { header: 'ID', value: (s) => s.id },
      { header: 'ACTOR', value: (s) => s.actor },
      { header: 'TURNS', value: (s) => String(s.taskCount) },
      { header: 'UPDATED', value: (s) => s.updatedAt },
      { header: 'TITLE', value: (s) => s.title ?? '' },
      { header: 'PROJECT', value: (s) => s.project ?? '' },
      { header: 'FIRST MESSAGE', value: (s) => s.firstMessage ?? '' },
    ];
    return renderTable(sessions, plain, mode);
  }
  const ids = shortIds(sessions.map((s) => s.id));
  const columns: Column<SessionListItem>[] = [
    { header: 'ID', value: (s) => ids.get(s.id) ?? s.id },
    { header: 'PROJECT', value: (s) => clip(s.project ?? '-', 16) },
    { header: 'TURNS', value: (s) => String(s.taskCount) },
    { header: 'UPDATED', value: (s) => listTime(s.updatedAt) },
    { header: 'FIRST MESSAGE', value: opening },
  ];
  return fitted(sessions, columns, mode);
}

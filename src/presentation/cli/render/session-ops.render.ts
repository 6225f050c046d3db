/**
 * What `session diff` / `/diff` and `session context` / `/context` / `/tools` print: a session's
 * changes as a (coloured) unified diff with the files changed outside the agent marked, and what
 * its next turn would send.
 */
import { fileUnified, type ResultOf, sessionContext, sessionDiff } from '../../../protocol/client/index.ts';
import type { Palette } from './colors.ts';
import { renderDiff } from './plan.render.ts';

type SessionDiff = ResultOf<typeof sessionDiff>;
type ContextPreview = ResultOf<typeof sessionContext>;
interface Mode {
  rich: boolean;
  pal: Palette;
  width: number | undefined;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const path = (f: SessionDiff['files'][number]): string => f.newPath ?? f.oldPath ?? '';

/**
 * The diff, file by file: rich, each file under a line naming the turns that changed it (marked
 * when changed outside the agent since) and coloured; plain, git's unified text (a marked file's
 * `diff --git` line is preceded by a `# changed outside the agent` comment line).
 */
export function sessionDiffText(d: SessionDiff, mode: Mode): string {
  const which = d.turn !== undefined ? `turn ${d.turn}` : 'its turns';
  if (d.files.length === 0) return mode.rich ? `No file changes in ${which} of session ${d.sessionId}\n` : '';
  const { pal } = mode;
  const out: string[] = [];
  if (mode.rich)
    out.push(
      `${pal.bold(`${plural(d.files.length, 'file')} changed by ${which}`)} ${pal.dim(`(session ${d.sessionId})`)}\n`,
    );
  for (const f of d.files) {
    const turns = `turn${f.turns.length === 1 ? '' : 's'} ${f.turns.join(', ')}`;
    if (mode.rich) {
      const mark = f.changedOutside ? ` ${pal.yellow('(changed outside the agent since: shown as it is now)')}` : '';
      out.push(`\n${pal.bold(path(f))} ${pal.dim(`${f.status}, ${turns}`)}${mark}\n`);
    } else if (f.changedOutside) out.push(`# changed outside the agent since: ${path(f)}\n`);
    out.push(renderDiff(fileUnified(f), mode));
  }
  return out.join('');
}

/** The tools a session's next turn offers, one a line. */
export function toolsText(p: ContextPreview, mode: Mode): string {
  if (!mode.rich) return p.tools.map((t) => `${t.name}\t${t.readOnly ? 'read' : 'write'}\t${t.description}\n`).join('');
  const { pal } = mode;
  if (p.tools.length === 0)
    return `${p.actor} has no tools${p.model ? '' : ' (a built-in actor answers by itself)'}\n${problemsText(p, pal)}`;
  const width = Math.max(...p.tools.map((t) => t.name.length));
  const lines = p.tools.map(
    (t) => `  ${t.name.padEnd(width)}  ${t.description}${t.readOnly ? '' : ` ${pal.dim('(may write)')}`}`,
  );
  return `${pal.bold(`Tools of ${p.actor}`)} ${pal.dim(`(${plural(p.tools.length, 'tool')}, ${p.toolTokens} tokens)`)}\n${lines.join('\n')}\n${problemsText(p, pal)}`;
}

function problemsText(p: ContextPreview, pal: Palette): string {
  return p.problems.length > 0 ? `${pal.yellow(`unavailable: ${p.problems.join('; ')}`)}\n` : '';
}

/** What the next turn would send: rich, a short report; plain, `key\tvalue` lines. */
export function contextText(p: ContextPreview, mode: Mode): string {
  const { pal } = mode;
  const h = p.history;
  const proj = p.project;
  const files = proj?.files
    ? `${plural(proj.files.length, 'file')} selected (${proj.mode})`
    : proj?.map
      ? `a map of ${proj.map.shown} of ${plural(proj.map.files, 'file')}`
      : '';
  if (!mode.rich) {
    const rows: Array<[string, string | number]> = [
      ['actor', p.actor],
      ['model', p.model ? `${p.model.provider}/${p.model.model}` : 'none'],
      ['system', p.system.tokens],
      ['history', `${h.kept}/${h.turns}`],
      ['history_tokens', h.tokens],
      ['tools', p.tools.length],
      ['tool_tokens', p.toolTokens],
      ['total', p.totals.tokens],
      ['room', p.totals.room],
    ];
    if (proj) rows.push(['project', proj.name], ['project_tokens', proj.tokens]);
    for (const f of proj?.files ?? []) rows.push(['file', `${f.resource}:${f.path}\t${f.tokens}`]);
    return rows.map(([k, v]) => `${k}\t${v}\n`).join('');
  }
  if (!p.model) return `${p.actor} is a built-in actor: its turns send nothing to a model\n`;
  const pct = p.totals.room > 0 ? Math.round((100 * p.totals.tokens) / p.totals.room) : 0;
  const out = [
    `${pal.bold(`Next turn of ${p.actor}`)} ${pal.dim(`(${p.model.provider} ${p.model.model})`)}`,
    `  system prompt  ${p.system.tokens} tokens ${pal.dim(`(instructions ${p.system.instructions}, summary ${p.system.compaction}, project ${p.system.project})`)}`,
    `  history        ${h.kept} of ${plural(h.turns, 'earlier turn')} kept, ${h.tokens} tokens${h.compacted > 0 ? pal.dim(` (${h.compacted} in the summary)`) : ''}${h.dropped > 0 ? pal.dim(` (${h.dropped} left out to fit)`) : ''}`,
  ];
  if (h.compactionDue > 0) out.push(pal.yellow(`                 ${h.compactionDue} turns will be summarised first`));
  if (proj)
    out.push(
      `  project        ${proj.name}: ${proj.problem ? pal.yellow(proj.problem) : `${files || 'nothing'}, ${proj.tokens} tokens`}`,
    );
  for (const f of proj?.files ?? []) out.push(pal.dim(`                 ${f.path} (${f.tokens})`));
  out.push(`  tools          ${p.tools.length}, ${p.toolTokens} tokens ${pal.dim('(/tools lists them)')}`);
  out.push(
    `  total          ${p.totals.tokens} of ${p.totals.room} tokens (${pct}%; window ${p.totals.window}, ${p.model.reserve} kept for the answer)`,
  );
  return `${out.join('\n')}\n${problemsText(p, pal)}`;
}

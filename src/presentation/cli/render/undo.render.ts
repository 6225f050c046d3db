/** Undo of chat turns as people read it: `agents session undo`, `/undo` in `agents chat`, `session show`. */
import type { TurnChange, UndoOutcome } from '../../../protocol/client/index.ts';
import type { Palette } from './colors.ts';
import { isTurnNumber } from './chat-commands.render.ts';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What an undo did, in rich (`pal`) or plain (tab-separated lines) form. */
export function undoText(o: UndoOutcome, rich: boolean, pal: Palette): string {
  if (!rich) {
    const lines = [
      ...o.turns.map((t) => `undone\t${t.turn}\t${t.taskId}\t${t.files.length}`),
      ...o.files.map((f) => `restored\t${f}`),
      ...o.overwritten.map((f) => `overwritten\t${f}`),
    ];
    return `${lines.join('\n')}\n`;
  }
  const first = o.turns[0]?.turn;
  const which = o.turns.length === 1 ? `turn ${first}` : `turns ${first}–${o.turns.at(-1)?.turn}`;
  const out = [`Undid ${which}: ${plural(o.files.length, 'file')} put back as they were before turn ${first}`];
  for (const t of o.turns) out.push(`  ${pal.bold(`turn ${t.turn}`)}  ${t.files.join(', ')}`);
  if (o.overwritten.length > 0)
    out.push(pal.yellow(`  overwritten (changed outside the agent): ${o.overwritten.join(', ')}`));
  return `${out.join('\n')}\n`;
}

/** Which turns changed which files (`session show`). */
export function changesText(changes: readonly TurnChange[], rich: boolean, pal: Palette): string {
  if (changes.length === 0) return '';
  if (!rich)
    return changes
      .flatMap((c) => c.files.map((f) => `change\t${c.turn}\t${c.taskId}\t${f}\t${c.undone ? 'undone' : 'kept'}\n`))
      .join('');
  const out = [`\n${pal.bold('File changes')} ${pal.dim('(agents session undo [--turn N] puts them back)')}`];
  for (const c of changes) {
    const files = c.files.join(', ');
    out.push(`  ${pal.bold(`turn ${c.turn}`)}  ${c.undone ? pal.dim(`${files} (undone)`) : files}`);
  }
  return `${out.join('\n')}\n`;
}

/** The arguments of `/undo [N] [--force]`, or why they are wrong. */
export function parseUndoArgs(args: readonly string[]): { turn?: number; force: boolean } | string {
  let turn: number | undefined;
  let force = false;
  for (const a of args) {
    if (a === '--force') force = true;
    else if (isTurnNumber(a) && turn === undefined) turn = Number(a);
    else return `unexpected ${a} (usage: /undo [turn] [--force])`;
  }
  return turn === undefined ? { force } : { turn, force };
}

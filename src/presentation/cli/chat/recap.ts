/** What a continued chat shows first: its last turns, shortly. */
import type { Session, Task } from '../../../protocol/client/index.ts';
import { compactionLine, compactionOf } from '../render/compaction.render.ts';
import { oneLine } from '../render/table.ts';
import { artifactsText, messageWords, partsText, stateWord } from '../render/task.render.ts';
import type { Ui } from '../render/ui.ts';

/** How many of a continued session's last turns the recap shows. */
export const RECAP_TURNS = 3;

/** The last turns of a continued session, shortly: what was asked and answered. */
export function printRecap(ui: Ui, session: Session, recap: readonly Task[]): void {
  if (recap.length === 0) return;
  const shown =
    recap.length < session.taskCount ? `last ${recap.length} of ${session.taskCount} turns` : 'turns so far';
  if (ui.rich) ui.out(`${ui.pal.dim(`${shown}:`)}\n`);
  for (const t of recap) {
    const compaction = compactionOf(t);
    if (compaction) {
      // A compaction is no exchange: it says what it summarised.
      if (ui.rich) ui.out(ui.pal.dim(`  ${compactionLine(compaction)}\n`));
      else ui.out(`recap\t${t.id}\tcompaction\t\t${clip(compactionLine(compaction))}\n`);
      continue;
    }
    const asked = clip(partsText(t.history?.find((m) => m.role === 'ROLE_USER')?.parts ?? []));
    const answer = clip(
      artifactsText(t.artifacts) || messageWords(t.status.message) || `(${stateWord(t.status.state)})`,
    );
    if (ui.rich) ui.out(ui.pal.dim(`  you › ${asked}\n  agent › ${answer}\n`));
    else ui.out(`recap\t${t.id}\t${stateWord(t.status.state)}\t${asked}\t${answer}\n`);
  }
}

const clip = (text: string): string => {
  const line = oneLine(text);
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
};

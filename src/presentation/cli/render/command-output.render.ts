/** A command's output in `plan status`, the run summary and `plan explain`: its last lines, and how to see all. */
import { outputTail, type CommandOutput, type planStatus, type ResultOf } from '../../../protocol/client/index.ts';
import type { Ui } from './ui.ts';

type Field = readonly [string, string | undefined];
type CommandRun = NonNullable<ResultOf<typeof planStatus>['lastCommand']>;

/** The command that prints a call's whole output (one decision's calls: a step makes one). */
export const wholeOutputCommand = (planId: string, decisionId: string): string =>
  `agents plan explain ${decisionId} --plan ${planId} --output`;

/** `2.1 KiB` (people) or the byte count. */
function sizeText(bytes: number, rich: boolean): string {
  if (!rich || bytes < 1024) return `${bytes} bytes`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1048576).toFixed(1)} MiB`;
}

/**
 * An output's last lines as fields: rich, one field of several lines ending with how to see all;
 * plain, the lines in one `output` field (newlines escaped, one record per line), then `output more`.
 */
export function outputFields(output: CommandOutput, seeAll: string, ui: Ui): Field[] {
  const tail = outputTail(output.text);
  if (tail.text === '') return [['output', ui.rich ? ui.pal.dim('(none)') : '(none)']];
  const shown = tail.text.split('\n').length;
  const cut = output.truncated ? `; ${sizeText(output.bytes, ui.rich)} in all, the middle cut when kept` : '';
  const more =
    tail.omittedLines > 0 || output.truncated
      ? `last ${shown} of ${shown + tail.omittedLines} lines${cut} — all of it: ${seeAll}`
      : undefined;
  if (!ui.rich)
    return [
      ['output', tail.text],
      ['output more', more],
    ];
  return [['output', more ? `${tail.text}\n${ui.pal.dim(more)}` : tail.text]];
}

/** `step 2 builtin/run-command FAILED: sh -c …: exit 3`. */
export function commandRunText(c: CommandRun, ui: Ui): string {
  const text = `${c.step !== undefined ? `step ${c.step} ` : ''}${c.tool} ${c.ok ? 'ok' : 'FAILED'}: ${c.summary}`;
  return ui.rich && !c.ok ? ui.pal.red(text) : text;
}

/** The status's last command and its output's tail (nothing when the plan ran no command). */
export function lastCommandFields(s: { planId: string; lastCommand?: CommandRun | undefined }, ui: Ui): Field[] {
  const c = s.lastCommand;
  if (!c) return [];
  return [
    ['last command', commandRunText(c, ui)],
    ...outputFields(c.output, wholeOutputCommand(s.planId, c.decisionId), ui),
  ];
}

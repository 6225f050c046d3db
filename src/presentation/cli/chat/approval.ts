/** An approval asked in the chat itself: the question once, with the diff or the command, answered on the next line. */
import { approvalWhat, type ApprovalRequest } from '../../../protocol/client/index.ts';
import type { Ui } from '../render/ui.ts';

/** The prompt the answer is typed at. */
export const APPROVAL_PROMPT = 'approve? [y]es [n]o [a]lways, or say what to do instead › ';

/** `approve edit_file?` with what the call would do, as it would do it. */
export function approvalQuestion(r: ApprovalRequest, ui: Ui): string {
  const what = r.kind === 'tool-call' && r.step === undefined ? (r.tool ?? 'a tool call') : approvalWhat(r);
  const shown =
    r.diff ?? (r.command ? `$ ${r.command}${r.cwd ? `   (in ${r.cwd})` : ''}` : (r.preview ?? r.previewProblem ?? ''));
  const body = shown === '' ? '' : `${shown.replace(/\n?$/, '\n')}`;
  const why = r.policy?.reason ?? '';
  const head = `the agent asks to run ${what}${why ? ` (${why})` : ''}`;
  if (!ui.rich) return `approval\t${what}\n${body}`;
  return `${ui.pal.yellow(ui.pal.bold(head))}\n${colourDiff(body, ui)}`;
}

/** A unified diff with its added and removed lines coloured (nothing else is changed). */
function colourDiff(text: string, ui: Ui): string {
  return text
    .split('\n')
    .map((l) =>
      l.startsWith('+') && !l.startsWith('+++')
        ? ui.pal.green(l)
        : l.startsWith('-') && !l.startsWith('---')
          ? ui.pal.red(l)
          : l,
    )
    .join('\n');
}

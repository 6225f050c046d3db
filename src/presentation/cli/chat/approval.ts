/** An approval asked in the chat itself: the question once, with the diff or the command, answered on the next line. */
import { approvalWhat, type ApprovalRequest } from '../../../protocol/client/index.ts';

/** The prompt the answer is typed at. */
export const APPROVAL_PROMPT = 'approve? [y]es [n]o [a]lways, or say what to do instead › ';

/**
 * `approval: builtin/edit` with what the call would do (its diff, its command line, or its
 * arguments), for plain output: in rich output the task's status line has already said it.
 */
export function approvalQuestion(r: ApprovalRequest): string {
  const what = r.kind === 'tool-call' && r.step === undefined ? (r.tool ?? 'a tool call') : approvalWhat(r);
  const shown =
    r.diff ?? (r.command ? `$ ${r.command}${r.cwd ? `   (in ${r.cwd})` : ''}` : (r.preview ?? r.previewProblem ?? ''));
  return `approval\t${what}\n${shown === '' ? '' : shown.replace(/\n?$/, '\n')}`;
}

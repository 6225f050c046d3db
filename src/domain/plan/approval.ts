/**
 * The one reader of an answer to a plan's approval request, whichever way it comes: `agents plan
 * approve|reject|prompt`, or a message on the waiting task (a `{approval: {decision, guidance}}`
 * data part, or text). Guidance never approves: only a clear yes does.
 */
import { AppError } from '../errors.ts';

export interface ApprovalAnswer {
  decision: 'approve' | 'reject';
  /** What to do instead (a rejection only). */
  guidance?: string | undefined;
  /**
   * An approval that also covers later calls (of a chat session, of a plan): `tool` every call of
   * the tool, `command` the calls running a command line that starts with the same words.
   */
  always?: 'tool' | 'command' | undefined;
}

/** What an answer may be, for error messages and approval requests. */
const VALID_ANSWERS =
  'approve (yes, y, approve, approved, ok), always (approve this and later calls like it: the same command, or with "always tool" every call of the tool), reject (no, n, reject, rejected), or a sentence of guidance (a rejection with guidance); as data: {"approval":{"decision":"approve"}}, {"approval":{"decision":"approve","always":"command"|"tool"}} or {"approval":{"decision":"reject","guidance":"…"}}';

const YES = /^(y|yes|approve|approved|ok|okay)[.!]?$/i;
const NO = /^(n|no|reject|rejected)[.!]?$/i;
const ALWAYS = /^(a|always)[.!]?$/i;
const ALWAYS_TOOL = /^always[ -](the )?tool[.!]?$/i;
const MAX_GUIDANCE = 10_000;

/**
 * Reads an answer from text and/or an `approval` data object (data wins when both are given).
 * Throws INVALID_PARAMS naming the valid answers when there is none, or it is malformed.
 */
export function parseApprovalAnswer(input: { text?: string | undefined; approval?: unknown }): ApprovalAnswer {
  if (input.approval !== undefined) return fromData(input.approval);
  const text = (input.text ?? '').trim();
  if (!text) throw invalid('the answer is empty', 'message.parts');
  if (text.length > MAX_GUIDANCE) throw invalid(`guidance is at most ${MAX_GUIDANCE} characters`, 'guidance');
  if (YES.test(text)) return { decision: 'approve' };
  if (ALWAYS.test(text)) return { decision: 'approve', always: 'command' };
  if (ALWAYS_TOOL.test(text)) return { decision: 'approve', always: 'tool' };
  if (NO.test(text)) return { decision: 'reject' };
  return { decision: 'reject', guidance: text };
}

function fromData(value: unknown): ApprovalAnswer {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw invalid('approval must be an object {decision, guidance?}', 'approval');
  const { decision, guidance, always, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length)
    throw invalid(
      `approval has unknown field${extra.length === 1 ? '' : 's'} ${extra.join(', ')}`,
      `approval.${extra[0]}`,
    );
  if (decision !== 'approve' && decision !== 'reject')
    throw invalid(
      `approval.decision must be "approve" or "reject", not ${JSON.stringify(decision) ?? 'missing'}`,
      'approval.decision',
    );
  if (guidance !== undefined && typeof guidance !== 'string')
    throw invalid('approval.guidance must be a string', 'approval.guidance');
  const g = guidance?.trim();
  if (g && g.length > MAX_GUIDANCE)
    throw invalid(`guidance is at most ${MAX_GUIDANCE} characters`, 'approval.guidance');
  if (decision === 'approve' && g)
    throw invalid('guidance comes with a rejection: approve without guidance, or reject with it', 'approval.guidance');
  if (always !== undefined && always !== 'tool' && always !== 'command')
    throw invalid('approval.always must be "tool" or "command"', 'approval.always');
  if (always !== undefined && decision !== 'approve') throw invalid('always comes with an approval', 'approval.always');
  if (always) return { decision: 'approve', always };
  return g ? { decision, guidance: g } : { decision };
}

function invalid(problem: string, field: string): AppError {
  return new AppError(
    'INVALID_PARAMS',
    `Not a valid answer to the approval request: ${problem}. Valid answers: ${VALID_ANSWERS}`,
    {
      fields: [{ field, description: problem }],
      hint: 'answer with agents plan approve <plan-id> or agents plan reject <plan-id> [--guidance TEXT]',
    },
  );
}

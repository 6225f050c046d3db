/**
 * Tool approvals between A2A and ACP: the options a permission request offers, and what the
 * client's choice answers the task with. "Always" is honoured by the bridge for the rest of the
 * ACP session (a later approval of the same tool is answered without asking); nothing is stored.
 */
import type { PermissionOption, RequestPermissionOutcome } from '@agentclientprotocol/sdk';

export type Decision = 'approve' | 'reject';

/** What the client's answer means: a decision (to remember for the tool, if `always`), or cancelled. */
export type PermissionAnswer = { decision: Decision; always: boolean } | { cancelled: true };

const OPTIONS: ReadonlyArray<PermissionOption & { answer: { decision: Decision; always: boolean } }> = [
  { optionId: 'allow_once', name: 'Allow', kind: 'allow_once', answer: { decision: 'approve', always: false } },
  {
    optionId: 'allow_always',
    name: 'Always allow this tool in this session',
    kind: 'allow_always',
    answer: { decision: 'approve', always: true },
  },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once', answer: { decision: 'reject', always: false } },
  {
    optionId: 'reject_always',
    name: 'Always reject this tool in this session',
    kind: 'reject_always',
    answer: { decision: 'reject', always: true },
  },
];

/** The options of a permission request (the task offers approve and reject; both can be remembered). */
export function permissionOptions(offered: readonly string[]): PermissionOption[] {
  const can = (d: Decision): boolean => offered.includes(d);
  return OPTIONS.filter((o) => can(o.answer.decision)).map(({ optionId, name, kind }) => ({ optionId, name, kind }));
}

/** The client's outcome as an answer; an option we did not offer is a rejection (never a silent approval). */
export function answerOf(outcome: RequestPermissionOutcome): PermissionAnswer {
  if (outcome.outcome === 'cancelled') return { cancelled: true };
  return OPTIONS.find((o) => o.optionId === outcome.optionId)?.answer ?? { decision: 'reject', always: false };
}

/** Decisions remembered with "always", per tool, for one ACP session. */
export class StandingDecisions {
  private readonly byTool = new Map<string, Decision>();

  remember(tool: string, answer: PermissionAnswer): void {
    if ('decision' in answer && answer.always) this.byTool.set(tool, answer.decision);
  }

  of(tool: string): Decision | undefined {
    return this.byTool.get(tool);
  }
}

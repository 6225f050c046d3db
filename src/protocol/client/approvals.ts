/**
 * Approvals as every front end reads and answers them: the typed request a waiting task (or plan)
 * carries, what it is for in a few words, and the answer — on the task, or through the plan.
 */
import { randomUUID } from 'node:crypto';
import { ApprovalRequest } from '../../domain/plan/approval-request.ts';
import type { Message } from '../../domain/a2a.model.ts';
import { planApprove, planReject } from '../a2a/contracts/plan.contract.ts';
import { sendMessage } from '../a2a/contracts/message.contract.ts';
import type { A2AClient } from './client.ts';

export { ApprovalRequest };

/** A person's answer: approve (`always`: this call and later ones like it), or reject with guidance. */
export interface ApprovalAnswer {
  decision: 'approve' | 'reject';
  guidance?: string;
  always?: 'tool' | 'command';
}

/** The value under `key` in a data part of the message. */
export const dataOf = (m: Message | undefined, key: string): unknown =>
  m?.parts
    .map((p) => (p.data && typeof p.data === 'object' ? (p.data as Record<string, unknown>)[key] : undefined))
    .find((v) => v !== undefined);

/** What a task waiting for input asks to approve (the `approvalRequest` data part of its status message), if anything. */
export function approvalRequestOf(m: Message | undefined): ApprovalRequest | undefined {
  const r = ApprovalRequest.safeParse(dataOf(m, 'approvalRequest'));
  return r.success ? r.data : undefined;
}

/** What the approval is for, in a few words: `step 1/2: builtin/write-file` or `apply (2 files)`. */
export function approvalWhat(r: ApprovalRequest): string {
  if (r.kind === 'apply')
    return `apply (${r.stats ? `${r.stats.files} file${r.stats.files === 1 ? '' : 's'}` : 'the changes'})`;
  return `step ${r.step ?? '?'}${r.of ? `/${r.of}` : ''}: ${r.tool ?? 'a tool call'}`;
}

/** The answer as the data part a waiting task takes. */
export const approvalPart = (answer: ApprovalAnswer): { data: { approval: ApprovalAnswer } } => ({
  data: { approval: answer },
});

/** Answers the approval a task waits for, on that task (it goes on; this does not wait for it). */
export async function answerTask(
  client: A2AClient,
  taskId: string,
  answer: ApprovalAnswer,
  signal?: AbortSignal,
): Promise<void> {
  await client.call(
    sendMessage,
    {
      message: { messageId: randomUUID(), role: 'ROLE_USER', taskId, parts: [approvalPart(answer)] },
      configuration: { returnImmediately: true },
    },
    signal ? { signal } : {},
  );
}

/** Answers what a plan waits for through the plan (plan/approve or plan/reject); its run goes on. */
export async function answerPlan(client: A2AClient, planId: string, answer: ApprovalAnswer): Promise<void> {
  if (answer.decision === 'approve')
    await client.call(planApprove, { planId, wait: false, ...(answer.always ? { always: answer.always } : {}) });
  else
    await client.call(planReject, { planId, wait: false, ...(answer.guidance ? { guidance: answer.guidance } : {}) });
}

import { z } from 'zod';
import type { Message } from '../../domain/a2a.model.js';
import type { Actor, ActorTurn } from '../ports/actor.port.js';
import type { Answer, PlanEngine } from './plan-engine.js';

const PlanCommand = z.object({ op: z.enum(['strategize', 'execute', 'apply']), planId: z.string().min(1), yes: z.boolean().optional() });
const Approval = z.object({ decision: z.enum(['approve', 'reject']), guidance: z.string().max(10_000).optional() });

const dataOf = (m: Message, key: string): unknown => m.parts.map((p) => (p.data && typeof p.data === 'object' ? (p.data as Record<string, unknown>)[key] : undefined)).find((v) => v !== undefined);

/**
 * `builtin/planner`: the actor behind every plan's context. A message carrying a `planCommand`
 * runs a phase; an answer on a task that waits (input-required) continues it.
 */
export class PlannerActor implements Actor {
  readonly name = 'builtin/planner';
  readonly description = 'Runs plans (strategize, execute, apply); answers approval requests on their tasks.';

  constructor(private readonly engine: PlanEngine) {}

  async handle(turn: ActorTurn): Promise<void> {
    if (!turn.isFollowUp) {
      const cmd = PlanCommand.safeParse(dataOf(turn.message, 'planCommand'));
      if (!cmd.success) return turn.status('TASK_STATE_REJECTED', 'This actor runs plans; start one with `agents plan use <action> <project>`');
      return this.engine.run(cmd.data, turn);
    }
    const started = PlanCommand.safeParse(dataOf(turn.task.history?.[0] ?? { messageId: '', role: 'ROLE_USER', parts: [{ text: '' }] }, 'planCommand'));
    if (!started.success) return turn.status('TASK_STATE_FAILED', 'This task does not belong to a plan');
    const answer = parseAnswer(turn.message);
    if (!answer) {
      return turn.status('TASK_STATE_INPUT_REQUIRED', 'Answer with approve or reject (a sentence of guidance counts as reject with guidance)');
    }
    return this.engine.answer(started.data.planId, answer, turn);
  }
}

/** `{approval: {decision, guidance}}` as data, or text: yes/approve, no/reject, or guidance (a rejection). */
export function parseAnswer(m: Message): Answer | undefined {
  const data = Approval.safeParse(dataOf(m, 'approval'));
  if (data.success) return data.data;
  const text = m.parts.map((p) => p.text ?? '').join(' ').trim();
  if (!text) return undefined;
  if (/^(y|yes|approve|approved|ok)$/i.test(text)) return { decision: 'approve' };
  if (/^(n|no|reject|rejected)$/i.test(text)) return { decision: 'reject' };
  return { decision: 'reject', guidance: text };
}

import type { Decision, Plan } from '../../../domain/plan/plan.ts';
import { judgeDone } from '../../../domain/plan/plan-progress.ts';
import type { ContextSnapshotRef } from '../../context/context.types.ts';
import type { PlanRecorder } from '../plan.recorder.ts';
import type { FinishArgs } from './execution.prompt.ts';

/** What the end of an execution run says about the definition of done. */
export interface Assessment {
  decision: Decision;
  met: boolean;
  /** How the verify command ended, in words (absent: no verify command). */
  verifyWords: string | undefined;
  /** What the actor said, in words. */
  said: string;
}

/**
 * Records the execution actor's assessment as a decision under the strategy and sets `plan.done`:
 * the verify command decides when there is one, else the actor's own `done`.
 */
export async function recordAssessment(
  recorder: PlanRecorder,
  plan: Plan,
  input: {
    rootId: string;
    finish: FinishArgs;
    verify: NonNullable<Plan['done']>['verify'];
    snapshot: ContextSnapshotRef | undefined;
  },
): Promise<Assessment> {
  const { finish: f, verify } = input;
  const met = verify ? verify.ok : f.done === true;
  const verifyWords = verify
    ? `verify \`${verify.command}\` ${verify.exitCode === 0 ? 'exited 0' : verify.exitCode === null ? `did not finish (${verify.summary})` : `exited ${verify.exitCode}`}`
    : undefined;
  const said =
    f.done === undefined
      ? 'the actor stopped without calling finish'
      : `the actor says it is ${f.done ? '' : 'not '}done`;
  const decision = await recorder.record(plan, {
    type: 'assessment',
    parentId: input.rootId,
    question: 'Is the definition of done met?',
    chosen: met ? 'met' : 'not met',
    alternatives: [met ? 'not met' : 'met'],
    confidence: f.confidence ?? (verify ? 1 : 0.5),
    rationale: [f.assessment, `${said}${verifyWords ? `; ${verifyWords}` : ''}`].join('\n'),
    context: {
      by: verify ? 'verify' : 'assessment',
      actorDone: f.done ?? null,
      ...(input.snapshot ? { snapshot: input.snapshot } : {}),
      ...(verify ? { verify } : {}),
    },
  });
  judgeDone(plan, {
    met,
    by: verify ? 'verify' : 'assessment',
    ...(verify ? { verify } : {}),
    assessment: f.assessment,
    decisionId: decision.id,
    at: recorder.now().toISOString(),
  });
  return { decision, met, verifyWords, said };
}

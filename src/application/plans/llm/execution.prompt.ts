/**
 * What the execution actor of a plan from a goal is told: the system prompt (goal, definition of
 * done, invariants, verify command, the strategy and the user's guidance, the context it was given)
 * and the first message of a conversation (a fresh run, or one that resumes earlier work).
 */
import type { Decision, Plan } from '../../../domain/plan/plan.ts';
import { fragmentsText, type AssembledContext } from '../../context/context.types.ts';
import { goalBrief } from './plan.prompt.ts';

/** How much of the sandbox's diff a resumed run is shown (characters). */
export const MAX_RESUME_DIFF = 12_000;

/** The name of the tool the actor ends its work with. */
export const FINISH_TOOL = 'finish';

export const FINISH_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    done: { type: 'boolean', description: 'whether the definition of done is met' },
    assessment: { type: 'string', minLength: 1, description: 'what was done, and why it meets the definition or not' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
  },
  required: ['done', 'assessment'],
  additionalProperties: false,
};

export interface FinishArgs {
  /** Undefined: the actor stopped calling tools without saying. */
  done?: boolean | undefined;
  assessment: string;
  confidence?: number | undefined;
}

const chosenText = (d: Decision): string => (typeof d.chosen === 'string' ? d.chosen : JSON.stringify(d.chosen));

/** The strategy the actor follows: the root decision and the choices, in the order they were made. */
export function strategyOf(decisions: readonly Decision[]): Decision[] {
  return decisions.filter((d) => !d.superseded && (d.type === 'strategy' || d.type === 'choice'));
}

/** The user's guidance still in force, in order. */
export function guidanceOf(decisions: readonly Decision[]): Decision[] {
  return decisions.filter((d) => !d.superseded && d.type === 'guidance');
}

/** Words of the decisions so far, for the context service's `decisions` ranking. */
export function decisionTerms(decisions: readonly Decision[]): string[] {
  return [...strategyOf(decisions), ...guidanceOf(decisions)].map((d) => `${d.question} ${chosenText(d)}`);
}

export function executionSystemPrompt(input: {
  plan: Plan;
  decisions: readonly Decision[];
  context: AssembledContext | undefined;
  actorPrompt?: string | undefined;
  toolProblems: readonly string[];
}): string {
  const { plan, decisions, context } = input;
  const parts: string[] = [];
  if (input.actorPrompt?.trim()) parts.push(input.actorPrompt.trim());
  parts.push(
    [
      `You are the execution actor of plan ${plan.id}. You work in the plan's sandbox, a copy of the project${plan.projects.length === 1 ? '' : 's'} ${plan.projects.join(', ')}: every path is relative to its root, and nothing you do reaches the project until the user applies the plan.`,
      `Carry out the strategy below with your tools. When the work is done, or cannot be done, call ${FINISH_TOOL} with done (whether the definition of done is met), your assessment and your confidence.`,
    ].join(' '),
  );
  parts.push(goalBrief(plan));
  if (plan.verify) parts.push('You may run the verify command yourself (builtin/run-command) before you finish.');
  const strategy = strategyOf(decisions);
  if (strategy.length)
    parts.push(
      [
        'Strategy (decided before execution):',
        ...strategy.map(
          (d, i) => `${i + 1}. ${d.question} → ${chosenText(d)}${d.rationale ? `. Why: ${d.rationale}` : ''}`,
        ),
      ].join('\n'),
    );
  const guidance = guidanceOf(decisions);
  if (guidance.length)
    parts.push(
      [
        'Guidance from the user (follow it for the rest of the run; where it differs from the strategy, it wins):',
        ...guidance.map((d) => `- ${chosenText(d)}`),
      ].join('\n'),
    );
  if (input.toolProblems.length) parts.push(`Unavailable in this plan: ${input.toolProblems.join('; ')}.`);
  if (context && (context.fragments.length > 0 || context.instructionFragments.length > 0))
    parts.push(fragmentsText(context, 'for this goal (read others with your tools)'));
  return parts.join('\n\n');
}

/** The first message of a run's conversation: go, or (resumed) what the sandbox holds and what happened since. */
export function openingMessage(input: {
  resumed: boolean;
  /** The sandbox's diff against its base (resumed runs). */
  diff?: string | undefined;
  previousError?: Plan['error'];
  /** Guidance the user gave since the work stopped. */
  guidanceSince: readonly Decision[];
}): string {
  const out: string[] = [];
  const conflict = input.previousError?.kind === 'conflict' ? input.previousError : undefined;
  if (input.resumed) {
    const diff = input.diff ?? '';
    out.push(
      diff.trim()
        ? `This run resumes earlier work: the sandbox already holds the work so far. Its changes against the base:\n\`\`\`diff\n${capDiff(diff)}\n\`\`\``
        : 'This run resumes earlier work; the sandbox holds no changes yet.',
    );
    if (input.previousError && !conflict) out.push(`The previous run stopped: ${input.previousError.message}.`);
  }
  if (conflict)
    out.push(
      `Bringing the sandbox up to date with the branch the plan targets left conflicts${conflict.files?.length ? ` in ${conflict.files.join(', ')}` : ''} (${conflict.message}). First resolve the conflict markers (<<<<<<<, =======, >>>>>>>) in ${conflict.files?.length === 1 ? 'that file' : 'those files'}, keeping the intent of both sides; then go on with the goal.`,
    );
  if (input.guidanceSince.length)
    out.push(`Since then the user said:\n${input.guidanceSince.map((d) => `- ${chosenText(d)}`).join('\n')}`);
  out.push(
    input.resumed
      ? `Go on with the strategy from where the work stands, then call ${FINISH_TOOL}.`
      : `Carry out the strategy now, then call ${FINISH_TOOL}.`,
  );
  return out.join('\n\n');
}

function capDiff(diff: string): string {
  if (diff.length <= MAX_RESUME_DIFF) return diff.replace(/\n$/, '');
  return `${diff.slice(0, MAX_RESUME_DIFF)}\n… [${diff.length - MAX_RESUME_DIFF} more characters of the diff not shown: see builtin/git-diff]`;
}

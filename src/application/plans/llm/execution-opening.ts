/**
 * How an execution actor's conversation opens and how it says it is done: the system prompt with
 * the strategy and the context the context service assembles, the opening message (what a resumed
 * run finds, the guidance since), and the `finish` control tool.
 */
import { messageOf } from '../../../domain/errors.ts';
import type { Decision, Plan } from '../../../domain/plan/plan.ts';
import { snapshotRef, type AssembledContext } from '../../context/context.types.ts';
import type { ModelTool } from '../../ports/language-model.port.ts';
import type { ControlTool } from '../../agent/agent.types.ts';
import type { PlanRunPorts } from '../plan.recorder.ts';
import {
  decisionTerms,
  executionSystemPrompt,
  FINISH_SCHEMA,
  FINISH_TOOL,
  guidanceOf,
  openingMessage,
} from './execution.prompt.ts';
import type { ExecutionTranscript } from './execution-text.ts';
import { PlanActorFailure, type PlanLlmDeps, type PlanModel } from './plan-model.ts';

/** What opening a conversation reads: the plan's diff and checkpoints, the context service, the model's window. */
export interface OpeningInputs {
  io: Pick<PlanRunPorts, 'recorder' | 'plans'>;
  llm: Pick<PlanLlmDeps, 'context'>;
  plan: Plan;
  model: PlanModel;
  signal: AbortSignal;
}

const FINISH_OFFERED: ModelTool = {
  name: FINISH_TOOL,
  description:
    'End the work: say whether the definition of done is met, with your assessment (and a confidence from 0 to 1). The verify command, if any, runs after this.',
  inputSchema: FINISH_SCHEMA,
};

/** A new conversation: the system prompt with the strategy and context, and the opening message. */
export async function freshTranscript(
  c: OpeningInputs,
  decisions: Decision[],
  opts: { resumed: boolean; previousError: Plan['error']; toolProblems: string[] },
): Promise<ExecutionTranscript> {
  const { io, plan } = c;
  const context = await executionContext(c, decisions);
  const diff = opts.resumed ? (await io.recorder.diffs(plan)).map((d) => d.diff.unified).join('') : undefined;
  const checkpoints = await io.plans.checkpoints(plan.id);
  const since = checkpoints.at(-1)?.createdAt ?? '';
  return {
    messages: [
      {
        role: 'user',
        text: openingMessage({
          resumed: opts.resumed,
          diff,
          previousError: opts.previousError,
          guidanceSince: opts.resumed ? guidanceOf(decisions).filter((d) => d.createdAt >= since) : [],
        }),
      },
    ],
    steps: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    toolCalls: 0,
    system: executionSystemPrompt({
      plan,
      decisions,
      context,
      actorPrompt: c.model.def.systemPrompt,
      toolProblems: opts.toolProblems,
    }),
    snapshot: context ? snapshotRef(context) : undefined,
  };
}

/**
 * What the context service gives the actor for this goal (in the execute view); a failure stops
 * the run with a PlanActorFailure (the run saves and reports it).
 */
async function executionContext(c: OpeningInputs, decisions: Decision[]): Promise<AssembledContext | undefined> {
  const { plan, model, signal } = c;
  const project = plan.projects[0];
  if (!project) return undefined;
  try {
    return await c.llm.context.assemble({
      project,
      view: 'execute',
      goal: plan.description,
      action: plan.action,
      decisions: decisionTerms(decisions),
      modelWindow: model.contextWindow,
      answerReserve: model.maxTokens,
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    const hint = (err as { hint?: unknown }).hint;
    throw new PlanActorFailure({
      kind: 'internal',
      message: `the context for the execution actor could not be assembled: ${messageOf(err)}`,
      recoverable: true,
      hint: typeof hint === 'string' ? hint : `fix the cause, then run agents plan execute ${plan.id}`,
    });
  }
}

/** The `finish` tool: the actor's assessment, kept in the transcript; the run ends after this step's calls. */
export function finishTool(model: PlanModel, transcript: ExecutionTranscript): ControlTool {
  return {
    tool: FINISH_OFFERED,
    handle: (args) => {
      const problems = args.ok ? model.validate(FINISH_SCHEMA, args.value) : [args.problem];
      if (!args.ok || problems.length)
        return {
          output: `The arguments of ${FINISH_TOOL} are not valid: ${problems.slice(0, 10).join('; ')}. Call it again with {"done": true|false, "assessment": "…"}.`,
          isError: true,
        };
      const v = args.value as { done: boolean; assessment: string; confidence?: number };
      transcript.finishing = { done: v.done, assessment: v.assessment, confidence: v.confidence };
      return {
        output: 'Noted: the run ends after this step; the verify command (if any) runs now.',
        isError: false,
        stop: true,
      };
    },
  };
}

/**
 * The strategize phase of a plan from a goal: the strategy actor reads (only read-only tools, in the
 * project's directory, and the context the context service assembles for the `strategize` view) and
 * answers with a decision tree through the `submit_strategy` tool — the approach, then each decision
 * with the question, the option chosen, the alternatives it weighed, a confidence and a rationale.
 * The answer is validated against the schema; an answer off the schema is sent back with the
 * problems (bounded), then the phase errors with a hint. Each decision keeps a reference to the
 * context snapshot the actor saw. A correction re-plans from a decision with the user's guidance:
 * the decisions before it are given as settled, the actor decides the rest again.
 */
import type { Decision, Plan } from '../../../domain/plan/plan.ts';
import { completePhase, startPhase } from '../../../domain/plan/plan-state.ts';
import type { ContextSnapshotRef } from '../../context/context.types.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from '../plan.recorder.ts';
import { PlanActorFailure } from './plan-model.ts';
import { chosenOf, type Replan, type StrategyAnswer } from './strategy-schema.ts';
import { StrategyRun } from './strategy-run.ts';
import { attachTask, setStepsTotal } from '../../../domain/plan/plan-progress.ts';

export { MAX_STRATEGY_RETRIES, STRATEGY_SCHEMA, type Replan } from './strategy-schema.ts';

/**
 * Runs the strategy actor and records its decisions (all of them, or — re-planning — those from
 * `replan.fromIndex` on). Returns the decisions it recorded.
 */
export async function strategizeWithActor(
  io: PlanRunPorts,
  plan: Plan,
  turn: TaskHandle | undefined,
  signal: AbortSignal,
  replan?: Replan,
): Promise<Decision[]> {
  const llm = io.llm;
  const actors = plan.actors;
  if (!llm || !actors)
    return io.recorder.fail(plan, turn, 'strategize', {
      kind: 'actor',
      message: 'this agent runs no LLM actors, so it cannot strategize a plan from a goal',
      recoverable: false,
    });
  startPhase(plan, 'strategize');
  if (turn) attachTask(plan, 'strategize', turn.task.id);
  await io.recorder.save(plan);
  await turn?.status('TASK_STATE_WORKING', `Strategizing with ${actors.strategy}: ${plan.description}`, planMeta(plan));
  try {
    const answer = await new StrategyRun(io, llm, plan, turn, signal, replan).run();
    if (!answer) return [];
    const made = await recordStrategy(io, plan, answer.answer, answer.context, replan);
    for (const d of made)
      await turn?.artifact(
        { artifactId: 'decisions', name: 'decisions', parts: [{ data: d, mediaType: 'application/json' }] },
        { append: true },
      );
    const all = (await io.plans.decisions(plan.id)).filter((d) => d.type === 'choice' && !d.superseded);
    setStepsTotal(plan, all.length);
    completePhase(plan);
    await io.recorder.save(plan);
    await turn?.status(
      'TASK_STATE_COMPLETED',
      `Strategy ready: ${all.length} decision${all.length === 1 ? '' : 's'} (${actors.strategy}). Next: agents plan tree ${plan.id}, agents plan execute ${plan.id}`,
      planMeta(plan),
    );
    return made;
  } catch (err) {
    if (err instanceof PlanActorFailure)
      return io.recorder.fail(
        plan,
        turn,
        'strategize',
        err.error,
        err.error.kind === 'budget' ? 'constrained' : 'errored',
      );
    throw err;
  }
}

/** The decisions of an answer: a new root (unless re-planning below it) and one choice per decision. */
async function recordStrategy(
  io: PlanRunPorts,
  plan: Plan,
  a: StrategyAnswer,
  context: ContextSnapshotRef,
  replan: Replan | undefined,
): Promise<Decision[]> {
  const made: Decision[] = [];
  const existingRoot = replan?.kept.find((d) => d.type === 'strategy');
  const guided = replan
    ? { guidance: replan.guidance, ...(replan.corrected ? { corrects: replan.corrected.id } : {}) }
    : {};
  const root =
    existingRoot ??
    (await io.recorder.record(plan, {
      type: 'strategy',
      question: `How to reach: ${plan.definitionOfDone}`,
      chosen: a.approach,
      alternatives: a.alternatives ?? [],
      confidence: a.confidence,
      rationale: a.rationale,
      context: { snapshot: context, actor: plan.actors?.strategy, ...guided },
    }));
  if (!existingRoot) made.push(root);
  const from = replan?.fromIndex ?? 0;
  // A model that repeats the decisions that stand (asked for the new ones only) does not duplicate them.
  const standing = new Set(
    (replan?.kept ?? []).filter((d) => d.type === 'choice').map((d) => `${d.question}\n${chosenOf(d)}`),
  );
  const fresh = a.decisions.filter((d) => !standing.has(`${d.question}\n${d.chosen}`));
  for (const [i, d] of fresh.entries()) {
    made.push(
      await io.recorder.record(plan, {
        type: 'choice',
        parentId: root.id,
        stepIndex: from + i,
        question: d.question,
        chosen: d.chosen,
        alternatives: d.alternatives,
        confidence: d.confidence,
        rationale: d.rationale,
        context: { snapshot: context, actor: plan.actors?.strategy, ...guided },
      }),
    );
  }
  return made;
}

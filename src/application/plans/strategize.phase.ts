import type { Decision, Plan } from '../../domain/plan/plan.ts';
import { renderTemplate } from '../../domain/plan/plan.ts';
import { completePhase, startPhase } from '../../domain/plan/plan-state.ts';
import { planMeta, type PlanRunPorts, type TaskHandle } from './plan.recorder.ts';
import { actionOf, resourcesOf, type PlanRegistry } from './plan-definitions.ts';
import { attachTask, setStepsTotal } from '../../domain/plan/plan-progress.ts';

/** What the strategize phase of a stepped action uses: the recorder, the plan's decisions, the registry (its action, tools, resources). */
export type StrategizeInputs = Pick<PlanRunPorts, 'recorder' | 'plans'> & { registry: PlanRegistry };

/** The strategize phase: records one decision per declared step of the action (from `fromStep` on). */
export async function strategize(
  io: StrategizeInputs,
  plan: Plan,
  turn: TaskHandle | undefined,
  fromStep: number,
  guidance?: string,
): Promise<Decision[]> {
  const action = await actionOf(io.registry, plan);
  startPhase(plan, 'strategize');
  if (turn) attachTask(plan, 'strategize', turn.task.id);
  await io.recorder.save(plan);
  await turn?.status('TASK_STATE_WORKING', `Strategizing: ${plan.description}`, planMeta(plan));
  const steps = action.steps ?? [];
  const decisions = await io.plans.decisions(plan.id);
  let root = decisions.find((d) => d.type === 'strategy' && !d.superseded);
  const made: Decision[] = [];
  const context = await contextSnapshot(io, plan);
  if (!root) {
    root = await io.recorder.record(plan, {
      type: 'strategy',
      question: `How to reach: ${plan.definitionOfDone}`,
      chosen: `run the ${steps.length} declared step${steps.length === 1 ? '' : 's'} of ${action.name}`,
      alternatives: [],
      rationale: 'The built-in deterministic actor follows the steps the action declares.',
      context,
    });
    made.push(root);
  }
  for (let i = fromStep; i < steps.length; i++) {
    const step = steps[i];
    if (!step) continue;
    const tool = await io.registry.use('tool', step.tool);
    if (!tool) {
      return io.recorder.fail(plan, turn, 'strategize', {
        kind: 'strategy',
        message: `step ${i + 1} names tool ${step.tool}, which does not exist`,
        recoverable: false,
        hint: 'fix the action definition',
      });
    }
    const args = renderTemplate(step.args ?? {}, plan.arguments) as Record<string, unknown>;
    made.push(
      await io.recorder.record(plan, {
        type: 'step',
        parentId: root.id,
        stepIndex: i,
        question: `Step ${i + 1} of ${steps.length}: ${step.description ?? step.id ?? step.tool}`,
        chosen: { tool: step.tool, args },
        rationale: `Declared as step ${step.id ?? i + 1} of ${action.name}${guidance ? `; guidance: ${guidance}` : ''}`,
        context: { tool: step.tool, readOnly: tool.definition.readOnly },
      }),
    );
  }
  for (const d of made)
    await turn?.artifact(
      { artifactId: 'decisions', name: 'decisions', parts: [{ data: d, mediaType: 'application/json' }] },
      { append: true },
    );
  setStepsTotal(plan, steps.length);
  completePhase(plan);
  await io.recorder.save(plan);
  await turn?.status(
    'TASK_STATE_COMPLETED',
    `Strategy ready: ${steps.length} step${steps.length === 1 ? '' : 's'}. Next: agents plan execute ${plan.id}`,
    planMeta(plan),
  );
  return made;
}

/** What the strategy was decided from: the plan's projects, resources, arguments and goal. */
async function contextSnapshot(io: StrategizeInputs, plan: Plan): Promise<Record<string, unknown>> {
  return {
    projects: plan.projects,
    resources: (await resourcesOf(io.registry, plan)).map((r) => ({
      name: r.name,
      type: r.type,
      ...(r.type === 'git-remote' ? { url: r.url } : { path: r.path }),
    })),
    arguments: plan.arguments,
    definitionOfDone: plan.definitionOfDone,
  };
}

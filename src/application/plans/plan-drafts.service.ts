import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import { planNetwork, renderTemplate, type Plan, type PlanActors, type PlanInvariant } from '../../domain/plan/plan.ts';
import type { PolicySnapshot } from '../../domain/plan/policy.ts';
import { DEFAULT_AUTOMATION_PROFILE, GLOBAL_INVARIANTS } from '../../domain/registry/builtins.ts';
import type { ActionDefinition } from '../../domain/registry/action.definition.ts';
import { profileEntityName, type ProjectDefinition } from '../../domain/registry/project.definition.ts';
import { toolArgumentProblems } from '../../domain/registry/tool-arguments.ts';
import type { Principal } from '../ports/principal.ts';
import { resolveArguments } from './arguments.ts';
import { assertCostBudgetCounts } from './cost-budget-check.ts';
import { CONTEXT_PREFIX } from './plan-access.service.ts';
import type { PlanServiceDeps } from './plan.types.ts';

/** The action of `plan use --goal`. */
export const GOAL_ACTION = 'builtin/goal';

/** The global invariants, then the action's, then each project's, in that order. */
function invariantsOf(
  action: string,
  def: ActionDefinition,
  names: string[],
  projects: ProjectDefinition[],
): PlanInvariant[] {
  return [
    ...GLOBAL_INVARIANTS.map((text) => ({ text, source: 'global' as const })),
    ...(def.invariants ?? []).map((text) => ({ text, source: 'action' as const, from: action })),
    ...projects.flatMap((p, i) =>
      (p.settings?.invariants ?? []).map((text) => ({ text, source: 'project' as const, from: names[i] ?? p.name })),
    ),
  ];
}

/** The action's arguments as given, with the goal as its `goal` argument; each checked (resolveArguments). */
function argumentsOf(action: string, def: ActionDefinition, input: UseInput): Plan['arguments'] {
  const given = { ...(input.arguments ?? {}) };
  if (input.goal !== undefined) {
    if (!def.arguments?.['goal'])
      throw new AppError('INVALID_PARAMS', `Action ${action} takes no goal argument`, {
        fields: [{ field: 'goal', description: `use builtin/goal, or pass the action's own arguments` }],
      });
    given['goal'] = input.goal;
  }
  return resolveArguments(def, given);
}

/** The plan argument a step argument is made of (`{{pattern}}` → pattern), if it is exactly one. */
function argumentBehind(template: unknown): string | undefined {
  return typeof template === 'string' ? /^\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}$/.exec(template)?.[1] : undefined;
}

/** The verify command: the first project's that has one, else the action's. */
function verifyOf(
  action: string,
  def: ActionDefinition,
  names: string[],
  projects: ProjectDefinition[],
): Plan['verify'] {
  const i = projects.findIndex((p) => p.settings?.verify);
  const project = projects[i];
  const [v, source] = project?.settings?.verify
    ? [project.settings.verify, `project ${names[i] ?? project.name}`]
    : [def.verify, `action ${action}`];
  if (!v) return undefined;
  return { command: v.command, ...(v.timeoutSeconds ? { timeoutSeconds: v.timeoutSeconds } : {}), source };
}

export interface UseInput {
  /** Absent with a goal: builtin/goal. */
  action?: string | undefined;
  /** The `goal` argument of builtin/goal (or of any action that declares one). */
  goal?: string | undefined;
  projects: string[];
  arguments?: Record<string, unknown> | undefined;
  /** An automation profile entity (`manual`, `trusted`, `auto`: the built-ins). */
  automationProfile?: string | undefined;
  maxToolCalls?: number | undefined;
  maxWallSeconds?: number | undefined;
  maxTokens?: number | undefined;
  maxCost?: number | undefined;
  /** Both actors of a plan from a goal (an action without steps). */
  actor?: string | undefined;
  strategyActor?: string | undefined;
  executionActor?: string | undefined;
  wait?: boolean | undefined;
}

/**
 * A new plan from an action and projects (`plan use`): the action, projects, actors, arguments and
 * budgets checked; the automation profile's rules, the invariants and the verify command frozen in
 * the plan as they are now. Nothing is stored here: the lifecycle stores the draft and strategizes.
 */
export class PlanDrafts {
  private readonly deps: Pick<PlanServiceDeps, 'registry' | 'engine' | 'now'>;
  private readonly now: () => Date;

  constructor(deps: Pick<PlanServiceDeps, 'registry' | 'engine' | 'now'>) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  /** The plan `use` creates (not stored yet): every input checked, its profile's rules and invariants frozen. */
  async draft(input: UseInput, principal: Principal): Promise<Plan> {
    const actionName = input.action ?? (input.goal !== undefined ? GOAL_ACTION : undefined);
    if (!actionName)
      throw new AppError('INVALID_PARAMS', 'A plan needs an action, or a goal', {
        fields: [{ field: 'action', description: 'name an action, or give a goal (builtin/goal)' }],
      });
    const action = await this.deps.registry.show('action', actionName, principal);
    const def = action.definition;
    if (input.projects.length === 0)
      throw new AppError('INVALID_PARAMS', 'A plan needs at least one project', {
        fields: [{ field: 'projects', description: 'name at least one project' }],
      });
    const { projects, networks, profile } = await this.projectsOf(input, principal);
    await this.deps.registry.assertMayApplyInto(input.projects, principal);
    const actors = await this.actorsOf(action.name, def, projects, input, principal);
    const args = argumentsOf(action.name, def, input);
    await this.assertStepArguments(action.name, def, args);
    const at = this.now().toISOString();
    const policy = await this.snapshotProfile(profile ?? DEFAULT_AUTOMATION_PROFILE, at, principal);
    const id = newId();
    const verify = verifyOf(action.name, def, input.projects, projects);
    const plan: Plan = {
      id,
      name: `${action.name.split('/')[1] ?? action.name} on ${input.projects.join(', ')}`,
      action: action.name,
      projects: input.projects,
      arguments: args,
      description: String(renderTemplate(def.descriptionTemplate, args)),
      definitionOfDone: String(renderTemplate(def.definitionOfDone, args)),
      automationProfile: policy.profile,
      policy,
      phase: 'strategize',
      state: 'queued',
      attempt: 1,
      contextId: `${CONTEXT_PREFIX}${id}`,
      tasks: {},
      owner: principal.namespace,
      createdAt: at,
      updatedAt: at,
      budget: {
        maxToolCalls: input.maxToolCalls ?? 100,
        maxWallMs: (input.maxWallSeconds ?? 1800) * 1000,
        ...(input.maxTokens ? { maxTokens: input.maxTokens } : {}),
        ...(input.maxCost ? { maxCost: input.maxCost } : {}),
      },
      usage: { toolCalls: 0, wallMs: 0, tokens: 0, costUsd: 0 },
      cursor: 0,
      stepsTotal: def.steps?.length ?? 0,
      sandboxes: [],
      network: planNetwork(networks, def.network),
      ...(actors ? { actors } : {}),
      invariants: invariantsOf(action.name, def, input.projects, projects),
      ...(verify ? { verify } : {}),
    };
    return plan;
  }

  /**
   * A stepped action's steps with the plan's arguments filled in, checked as their tools will
   * check them: once made, a plan's steps cannot change (a correction re-strategizes the same
   * ones), so an argument its tool refuses is refused now, naming the plan argument it came from.
   */
  private async assertStepArguments(action: string, def: ActionDefinition, args: Plan['arguments']): Promise<void> {
    const problems: Array<{ field: string; description: string }> = [];
    for (const [i, step] of (def.steps ?? []).entries()) {
      const tool = await this.deps.registry.use('tool', step.tool);
      if (!tool) continue; // strategize reports a step naming a missing tool, as it does for a stored plan
      const rendered = renderTemplate(step.args ?? {}, args) as Record<string, unknown>;
      for (const p of toolArgumentProblems(tool.definition.inputSchema, rendered)) {
        const from = argumentBehind(step.args?.[p.field]);
        problems.push({
          field: from ? `arguments.${from}` : `steps[${i}].args.${p.field}`,
          description: `${p.description} (the ${p.field} of step ${i + 1}, ${step.tool})`,
        });
      }
    }
    if (problems.length > 0)
      throw new AppError(
        'INVALID_PARAMS',
        `Invalid arguments for ${action}: ${problems.map((p) => `${p.field} ${p.description}`).join('; ')}`,
        { fields: problems, hint: `see the action's arguments with \`agents action show ${action}\`` },
      );
  }

  /** The projects' definitions, network settings and the first automation profile one names; each resource must exist. */
  private async projectsOf(
    input: UseInput,
    principal: Principal,
  ): Promise<{
    projects: ProjectDefinition[];
    networks: Array<'none' | 'allow' | undefined>;
    profile: string | undefined;
  }> {
    let profile: string | undefined = input.automationProfile;
    const networks: Array<'none' | 'allow' | undefined> = [];
    const projects: ProjectDefinition[] = [];
    for (const name of input.projects) {
      const p = await this.deps.registry.show('project', name, principal);
      const project = p.definition;
      projects.push(project);
      profile ??= project.settings?.automationProfile;
      networks.push(project.settings?.network);
      for (const r of p.derived.resources) {
        if (!r.exists)
          throw new AppError(
            'INVALID_STATE',
            `Resource ${r.name} of project ${name} ${'missing' in r ? 'is not registered' : 'has no directory on disk'}`,
            { hint: `see agents project show ${name}` },
          );
      }
    }
    return { projects, networks, profile };
  }

  /** A stepped action runs without actors (none may be named); any other gets both (chooseActors). */
  private async actorsOf(
    action: string,
    def: ActionDefinition,
    projects: ProjectDefinition[],
    input: UseInput,
    principal: Principal,
  ): Promise<PlanActors | undefined> {
    const stepped = (def.steps?.length ?? 0) > 0;
    const actors = stepped ? undefined : await this.chooseActors(action, def, projects, input, principal);
    await assertCostBudgetCounts(this.deps.registry, actors, input.maxCost);
    if (stepped && (input.actor ?? input.strategyActor ?? input.executionActor))
      throw new AppError('INVALID_PARAMS', `Action ${action} declares steps: they run as declared, without actors`, {
        fields: [{ field: 'actor', description: 'only for actions without steps (builtin/goal)' }],
        hint: 'leave --actor out, or plan a goal: agents plan use --goal "…" PROJECT --actor NAME',
      });
    return actors;
  }

  /**
   * The actors of a plan without declared steps, each chosen in this order: the flag (`actor` for
   * both), the action's, the project's. Each must be an LLM actor the caller may read.
   */
  private async chooseActors(
    action: string,
    def: ActionDefinition,
    projects: ProjectDefinition[],
    input: UseInput,
    principal: Principal,
  ): Promise<PlanActors> {
    if (!this.deps.engine.runsActors)
      throw new AppError('INVALID_STATE', `Action ${action} declares no steps, and this agent runs no LLM actors`, {
        hint: 'plan an action with declared steps (builtin/replace, builtin/run-command), or run an agent with LLM providers',
      });
    const pick = (role: 'strategy' | 'execution'): { name: string; source: string } | undefined => {
      const flag = role === 'strategy' ? input.strategyActor : input.executionActor;
      if (flag) return { name: flag, source: `--${role}-actor` };
      if (input.actor) return { name: input.actor, source: '--actor' };
      const fromAction = role === 'strategy' ? def.strategyActor : def.executionActor;
      if (fromAction) return { name: fromAction, source: `action ${action}` };
      for (const p of projects) {
        const fromProject = role === 'strategy' ? p.settings?.strategyActor : p.settings?.executionActor;
        if (fromProject) return { name: fromProject, source: `project ${p.name}` };
      }
      return undefined;
    };
    const strategy = pick('strategy');
    const execution = pick('execution');
    if (!strategy || !execution) {
      const missing = [!strategy ? 'a strategy actor' : '', !execution ? 'an execution actor' : '']
        .filter(Boolean)
        .join(' and ');
      const what = action === GOAL_ACTION ? 'A plan from a goal' : `Action ${action} declares no steps: the plan`;
      throw new AppError('INVALID_PARAMS', `${what} needs ${missing}`, {
        fields: [{ field: 'actor', description: 'name an LLM actor' }],
        hint: "choose one with --actor NAME (both), --strategy-actor / --execution-actor, or set strategyActor and executionActor on the action or in the project's settings",
      });
    }
    for (const [role, c] of [
      ['strategy', strategy],
      ['execution', execution],
    ] as const) {
      const e = await this.deps.registry.visible('actor', c.name, principal);
      if (e.definition.provider === 'builtin')
        throw new AppError(
          'INVALID_PARAMS',
          `Actor ${c.name} (the ${role} actor, from ${c.source}) is a built-in deterministic actor: it cannot plan or carry out a goal`,
          {
            fields: [{ field: `${role}Actor`, description: 'an LLM actor (openai-compatible, openai, anthropic)' }],
            hint: 'see the LLM actors with agents actor list --type openai-compatible',
          },
        );
    }
    return {
      strategy: strategy.name,
      execution: execution.name,
      source: { strategy: strategy.source, execution: execution.source },
    };
  }

  /** The profile's rules as they are now: the plan keeps this copy whatever happens to the profile later. */
  private async snapshotProfile(ref: string, at: string, principal: Principal): Promise<PolicySnapshot> {
    const e = await this.deps.registry.show('automation-profile', profileEntityName(ref), principal);
    const d = e.definition;
    return {
      profile: e.name,
      revision: e.revision,
      contentHash: e.contentHash,
      default: d.default,
      applyApproval: d.applyApproval ?? true,
      rules: d.rules ?? [],
      takenAt: at,
    };
  }
}

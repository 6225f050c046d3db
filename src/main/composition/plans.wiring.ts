import type { AuditRecorder } from '../../application/accounts/audit.service.ts';
import type { ContextService } from '../../application/context/context.service.ts';
import type { TurnAdmission } from '../../application/ports/quota.port.ts';
import { PlanAccess } from '../../application/plans/plan-access.service.ts';
import { PlanAnswers } from '../../application/plans/plan-answers.service.ts';
import { PlanCorrections } from '../../application/plans/plan-corrections.service.ts';
import { PlanDrafts } from '../../application/plans/plan-drafts.service.ts';
import { PlanEngine } from '../../application/plans/plan-engine.service.ts';
import { PlanHousekeeping } from '../../application/plans/plan-housekeeping.service.ts';
import { PlanQueries } from '../../application/plans/plan-queries.service.ts';
import { PlanRecorder } from '../../application/plans/plan.recorder.ts';
import { PlanRuns } from '../../application/plans/plan-runs.service.ts';
import { PlanService } from '../../application/plans/plan.service.ts';
import type { RegistryParts } from './registry.wiring.ts';
import type { ServiceDeps } from './service-deps.ts';
import type { TaskParts } from './tasks.wiring.ts';

/** The plan engine and the plan services (kept in a file of its own: the plan area changes its wiring). */
export interface PlanParts {
  engine: PlanEngine;
  /** The lifecycle: use, execute, apply, prompt, rollback, cancel. */
  plans: PlanService;
  planQueries: PlanQueries;
  planAnswers: PlanAnswers;
  planCorrections: PlanCorrections;
  planHousekeeping: PlanHousekeeping;
}

/**
 * Plans run their phases on tasks of their own contexts: no actor runs there, nobody chats there
 * (the plans' answers register as the owner of those contexts with the task service's OwnedTasks).
 */
export function buildPlans(
  deps: ServiceDeps,
  registryParts: RegistryParts,
  context: ContextService,
  tasks: TaskParts,
  audit: AuditRecorder,
  admission: TurnAdmission,
): PlanParts {
  const { llm, registry, hooks } = registryParts;
  const recorder = new PlanRecorder({
    plans: deps.plans,
    sandboxes: deps.sandboxes,
    redactHostPaths: (text, namespace) => registry.redactHostPaths(text, namespace),
    hooks,
    logger: deps.logger,
  });
  const engine = new PlanEngine({
    recorder,
    plans: deps.plans,
    registry,
    sandboxes: deps.sandboxes,
    tools: deps.tools,
    logger: deps.logger,
    commandTimeoutMs: deps.commandTimeoutMs,
    hooks,
    audit,
    llm: llm && {
      models: llm.models,
      keys: llm.keys,
      tokens: llm.tokens,
      validator: llm.validator,
      transcripts: llm.transcripts,
      context,
      tracer: deps.tracer,
    },
  });
  const planDeps = {
    ...{ plans: deps.plans, registry, tasks: tasks.service, engine, recorder, sandboxes: deps.sandboxes },
    admission,
  };
  const access = new PlanAccess(planDeps);
  const planQueries = new PlanQueries(planDeps, access);
  const planAnswers = new PlanAnswers(planDeps, access, planQueries);
  const runs = new PlanRuns(planDeps, planQueries);
  const planCorrections = new PlanCorrections(planDeps, access, planAnswers, runs);
  const planHousekeeping = new PlanHousekeeping(planDeps, access, planQueries);
  const plans = new PlanService(planDeps, {
    access,
    queries: planQueries,
    answers: planAnswers,
    housekeeping: planHousekeeping,
    runs,
    drafts: new PlanDrafts(planDeps),
  });
  tasks.owned.add(planAnswers);
  return { engine, plans, planQueries, planAnswers, planCorrections, planHousekeeping };
}

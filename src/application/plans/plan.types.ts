import type { Task } from '../../domain/a2a.model.ts';
import type { Phase, PhaseState } from '../../domain/plan/plan.ts';
import type { PlanRepository } from '../ports/plan.repository.port.ts';
import type { RegistryService } from '../registry/registry.service.ts';
import type { TaskService } from '../tasks/task.service.ts';
import type { PlanEngine } from './plan-engine.service.ts';
import type { PlanRecorder } from './plan.recorder.ts';
import type { SandboxManager } from '../ports/sandbox.port.ts';
import type { TurnAdmission } from '../ports/quota.port.ts';
import type { PlanStatus } from './plan.views.ts';

/** What a command that starts (or continues) a phase run answers: the plan, and the run's task. */
export interface RunResult {
  plan: PlanStatus;
  taskId: string;
  task?: Task | undefined;
}

export interface CorrectInput {
  decisionId: string;
  mode: 'revert' | 'append';
  guidance: string;
  dryRun?: boolean | undefined;
}

export interface PlanListInput {
  phase?: Phase | undefined;
  state?: PhaseState | undefined;
  project?: string | undefined;
  action?: string | undefined;
  nameRegex?: string | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
}

export interface PlanServiceDeps {
  plans: PlanRepository;
  registry: RegistryService;
  tasks: TaskService;
  /** Runs the phases; which plans a run holds. */
  engine: PlanEngine;
  /** Saves a plan, its decisions and checkpoints (the same recorder the engine's runs use). */
  recorder: PlanRecorder;
  /** The plans' sandboxes (rebase and clean-up work on the ones the phases made). */
  sandboxes: SandboxManager;
  /**
   * Refuses a phase over the limits of the user who starts it, as a chat turn is (absent: none):
   * a phase runs as that user's turn, and its model's tokens are theirs.
   */
  admission?: TurnAdmission | undefined;
  now?: () => Date;
}

import type { Checkpoint, Decision, Phase, PhaseState, Plan, ToolCallRecord } from '../../domain/plan/plan.ts';

export interface PlanListQuery {
  owner: string;
  phase?: Phase | undefined;
  state?: PhaseState | undefined;
  action?: string | undefined;
}

/** A plan's records, each list in id (creation) order. */
export interface PlanRecords {
  decisions: Decision[];
  checkpoints: Checkpoint[];
  toolCalls: ToolCallRecord[];
}

/** Plans and their records: decisions, checkpoints and the execution log. */
export interface PlanRepository {
  create(plan: Plan): Promise<void>;
  get(id: string): Promise<Plan | undefined>;
  save(plan: Plan): Promise<void>;
  /** Deletes the plan and all its records (decisions, checkpoints, tool calls); false when there was none. */
  delete(id: string): Promise<boolean>;
  /** The owner's plans matching the filters, newest first. */
  list(query: PlanListQuery): Promise<Plan[]>;
  putDecision(d: Decision): Promise<void>;
  decisions(planId: string): Promise<Decision[]>;
  putCheckpoint(c: Checkpoint): Promise<void>;
  checkpoints(planId: string): Promise<Checkpoint[]>;
  putToolCall(t: ToolCallRecord): Promise<void>;
  toolCalls(planId: string): Promise<ToolCallRecord[]>;
  /** The records of several plans in one read (a page of a list), by plan id: every id given is in the map. */
  recordsOf(planIds: readonly string[]): Promise<Map<string, PlanRecords>>;
  /** Every owner's plans in a state (settling what a stopped process left processing). */
  listByState(state: PhaseState): Promise<Plan[]>;
}

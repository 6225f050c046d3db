import type { CommandOutput } from '../../domain/plan/command-output.ts';
import type { Checkpoint, Decision, Phase, PhaseState, Plan, ToolCallRecord } from '../../domain/plan/plan.ts';

export interface PlanListQuery {
  owner: string;
  phase?: Phase | undefined;
  state?: PhaseState | undefined;
  action?: string | undefined;
  /** At most this many (the newest). */
  limit?: number | undefined;
}

/** A plan's records, each list in id (creation) order; the tool calls without their output. */
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
  /** Up to `limit` of the owner's plans whose id starts with `prefix` (`%` and `_` are plain characters), newest first. */
  byIdPrefix(owner: string, prefix: string, limit: number): Promise<Plan[]>;
  putDecision(d: Decision): Promise<void>;
  decisions(planId: string): Promise<Decision[]>;
  putCheckpoint(c: Checkpoint): Promise<void>;
  checkpoints(planId: string): Promise<Checkpoint[]>;
  /** Stores a call with its output (a put again replaces both). */
  putToolCall(t: ToolCallRecord): Promise<void>;
  /** The plan's tool calls, without their output (up to a MiB each: read it with toolCallOutputs). */
  toolCalls(planId: string): Promise<ToolCallRecord[]>;
  /** The output the plan's calls named kept, by call id (a call that kept none is not in the map). */
  toolCallOutputs(planId: string, ids: readonly string[]): Promise<Map<string, CommandOutput>>;
  /** The newest of the plan's calls that kept a command's output, with it; undefined when none did. */
  lastCommandCall(planId: string): Promise<ToolCallRecord | undefined>;
  /** The records of several plans in one read (a page of a list), by plan id: every id given is in the map. */
  recordsOf(planIds: readonly string[]): Promise<Map<string, PlanRecords>>;
  /** Every owner's plans in a state (settling what a stopped process left processing). */
  listByState(state: PhaseState): Promise<Plan[]>;
}

import { newId } from '../../domain/ids.js';
import type { TaskState } from '../../domain/a2a.model.js';
import type { Checkpoint, Decision, Phase, Plan, PlanError, ToolCallRecord, Waiting } from '../../domain/plan/plan.js';
import { awaitAnswer, completePhase, declineApply, failPhase, markApplied, renderTemplate, startPhase, takeAnswer } from '../../domain/plan/plan.js';
import type { ApprovalAnswer } from '../../domain/plan/approval.js';
import { splitCommandLine } from '../../domain/plan/command-line.js';
import type { ActionDefinition, ProjectDefinition, ResourceDefinition, ToolDefinition } from '../../domain/registry/entities.js';
import { AppError } from '../../domain/errors.js';
import type { ActorTurn } from '../ports/actor.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { PlanRepository } from '../ports/plan.repository.port.js';
import type { SandboxDiff, SandboxInfo, SandboxManager, ToolRunner } from '../ports/sandbox.port.js';
import type { RegistryService } from '../registry/registry.service.js';

/**
 * The A2A task a run reports on: its status and artifact events, and the signal that cancels it.
 * PlanService gets one from TaskService (an owned task) and hands it to the engine.
 */
export type TaskHandle = Pick<ActorTurn, 'task' | 'signal' | 'status' | 'artifact'>;

export interface RunOptions {
  /** Approve every request of this run (tool calls and apply). */
  yes: boolean;
}

export interface PlanEngineDeps {
  plans: PlanRepository;
  registry: RegistryService;
  sandboxes: SandboxManager;
  tools: ToolRunner;
  logger: Logger;
  now?: () => Date;
  commandTimeoutMs?: number;
}

export const PLAN_META = 'urn:cleveragents:plan';

/**
 * Runs plan phases, each on the A2A task it is handed: strategize (one decision per declared step), execute
 * (tool calls in the sandbox, checkpoints, approvals, budgets), apply (into the project). Every
 * change is saved before it is reported; a cancelled or restarted run leaves a consistent plan.
 */
export class PlanEngine {
  private readonly open = new Map<string, Plan>();
  private readonly running = new Set<string>();
  private readonly now: () => Date;

  constructor(private readonly deps: PlanEngineDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** The plan as it stands (the in-memory copy while a run holds it). */
  async load(id: string): Promise<Plan | undefined> {
    return this.open.get(id) ?? (await this.deps.plans.get(id));
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  async save(plan: Plan): Promise<void> {
    plan.updatedAt = this.now().toISOString();
    await this.deps.plans.save(plan);
  }

  /** Strategizes a new plan on its task. */
  async strategizeOn(planId: string, task: TaskHandle): Promise<void> {
    await this.hold(planId, task, async (plan) => this.strategize(plan, task, 0));
  }

  /** Runs (or resumes) the execute phase on its task. */
  async execute(planId: string, task: TaskHandle, opts: RunOptions): Promise<void> {
    await this.hold(planId, task, async (plan) => this.executeSteps(plan, task, opts.yes));
  }

  /** Runs the apply phase on its task (asking for approval first unless `yes` or the auto profile). */
  async apply(planId: string, task: TaskHandle, opts: RunOptions): Promise<void> {
    await this.hold(planId, task, async (plan) => this.applyChanges(plan, task, opts.yes));
  }

  /**
   * Continues a run that waits for the user with their answer, on the task that waits (the plan
   * service has checked the owner and the state; the plan model checks the task again here).
   */
  async answer(planId: string, answer: ApprovalAnswer, task: TaskHandle, request: Pick<Waiting, 'kind' | 'decisionId'>): Promise<void> {
    await this.hold(planId, task, async (plan) => {
      // Two answers accepted at once: the first continued the run; the second answers a request
      // that is gone (the same task may already wait for the next one), so it answers nothing.
      const now = plan.waiting;
      if (!now || now.taskId !== task.task.id || now.kind !== request.kind || now.decisionId !== request.decisionId) return;
      const waiting = takeAnswer(plan, task.task.id);
      await this.record(plan, {
        type: 'approval',
        parentId: waiting.decisionId,
        question: waiting.kind === 'apply-approval' ? 'Apply the changes to the project?' : 'Run this tool call?',
        chosen: answer.decision,
        rationale: answer.guidance ?? (answer.decision === 'approve' ? 'approved by the user' : 'rejected by the user'),
        context: { request: waiting.request, ...(answer.guidance ? { guidance: answer.guidance } : {}) },
      });
      if (waiting.kind === 'apply-approval') {
        if (answer.decision === 'reject') {
          declineApply(plan);
          await this.save(plan);
          return task.status('TASK_STATE_CANCELED', `Apply declined${answer.guidance ? ` (${answer.guidance})` : ''}; the plan stays ready to apply`, this.meta(plan));
        }
        return this.applyChanges(plan, task, true);
      }
      return this.executeSteps(plan, task, false);
    });
  }

  // ---- phases -------------------------------------------------------------------------------

  /** Records one decision per declared step of the action (from `fromStep` on). */
  async strategize(plan: Plan, turn: TaskHandle | undefined, fromStep: number, guidance?: string): Promise<Decision[]> {
    const action = await this.action(plan);
    startPhase(plan, 'strategize');
    if (turn) plan.tasks.strategize = turn.task.id;
    await this.save(plan);
    await turn?.status('TASK_STATE_WORKING', `Strategizing: ${plan.description}`, this.meta(plan));
    const steps = action.steps ?? [];
    const decisions = await this.deps.plans.decisions(plan.id);
    let root = decisions.find((d) => d.type === 'strategy' && !d.superseded);
    const made: Decision[] = [];
    const context = await this.contextSnapshot(plan);
    if (!root) {
      root = await this.record(plan, {
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
      const tool = await this.deps.registry.lookup('tool', step.tool);
      if (!tool) {
        return this.fail(plan, turn, 'strategize', { kind: 'strategy', message: `step ${i + 1} names tool ${step.tool}, which does not exist`, recoverable: false, hint: 'fix the action definition' });
      }
      const args = renderTemplate(step.args ?? {}, plan.arguments) as Record<string, unknown>;
      made.push(
        await this.record(plan, {
          type: 'step',
          parentId: root.id,
          stepIndex: i,
          question: `Step ${i + 1} of ${steps.length}: ${step.description ?? step.id ?? step.tool}`,
          chosen: { tool: step.tool, args },
          rationale: `Declared as step ${step.id ?? i + 1} of ${action.name}${guidance ? `; guidance: ${guidance}` : ''}`,
          context: { tool: step.tool, readOnly: (tool.definition as ToolDefinition).readOnly },
        }),
      );
    }
    for (const d of made) await turn?.artifact({ artifactId: 'decisions', name: 'decisions', parts: [{ data: d, mediaType: 'application/json' }] }, { append: true });
    plan.stepsTotal = steps.length;
    completePhase(plan);
    await this.save(plan);
    await turn?.status('TASK_STATE_COMPLETED', `Strategy ready: ${steps.length} step${steps.length === 1 ? '' : 's'}. Next: agents plan execute ${plan.id}`, this.meta(plan));
    return made;
  }

  private async executeSteps(plan: Plan, turn: TaskHandle, yes: boolean): Promise<void> {
    const resuming = plan.phase === 'execute';
    startPhase(plan, 'execute');
    plan.tasks.execute = turn.task.id;
    await this.save(plan);
    await turn.status('TASK_STATE_WORKING', resuming ? `Resuming execute at step ${plan.cursor + 1}` : 'Executing in a sandbox', this.meta(plan));
    const started = Date.now();
    const wall = plan.usage.wallMs;
    const tick = async (): Promise<void> => {
      plan.usage.wallMs = wall + (Date.now() - started);
    };

    if (plan.sandboxes.length === 0) {
      for (const r of await this.resources(plan)) {
        const sb = await this.deps.sandboxes.create(plan.id, r);
        plan.sandboxes.push(sb);
        await turn.status('TASK_STATE_WORKING', `Sandbox for ${r.name}: ${sb.root}${sb.branch ? ` (branch ${sb.branch})` : ''}`, this.meta(plan));
      }
      const cp = await this.checkpoint(plan, 'before-execute', 0);
      await turn.status('TASK_STATE_WORKING', `Checkpoint ${cp.id} before execute`, this.meta(plan, { checkpoint: cp.id }));
    } else if (resuming) {
      const last = (await this.deps.plans.checkpoints(plan.id)).filter((c) => c.stepIndex <= plan.cursor).at(-1);
      if (last) {
        await this.restore(plan, last);
        plan.cursor = last.stepIndex;
        await turn.status('TASK_STATE_WORKING', `Restored checkpoint ${last.id} (${last.label})`, this.meta(plan, { checkpoint: last.id }));
      }
    }
    await this.save(plan);

    const decisions = await this.deps.plans.decisions(plan.id);
    const sandbox = plan.sandboxes[0];
    if (!sandbox) return this.fail(plan, turn, 'execute', { kind: 'internal', message: 'the plan has no sandbox', recoverable: false });
    for (let i = plan.cursor; i < plan.stepsTotal; i++) {
      const d = decisions.find((x) => x.type === 'step' && x.stepIndex === i && !x.superseded);
      if (!d) return this.fail(plan, turn, 'execute', { kind: 'strategy', message: `no decision for step ${i + 1}`, recoverable: true, hint: `re-strategize with agents plan correct` });
      const { tool: toolName, args } = d.chosen as { tool: string; args: Record<string, unknown> };
      const tool = (await this.deps.registry.lookup('tool', toolName))?.definition as ToolDefinition | undefined;
      if (!tool) return this.fail(plan, turn, 'execute', { kind: 'tool', message: `tool ${toolName} no longer exists`, recoverable: true });
      await tick();
      if (plan.usage.toolCalls >= plan.budget.maxToolCalls) {
        return this.fail(plan, turn, 'execute', { kind: 'budget', message: `budget exceeded: ${plan.usage.toolCalls} of ${plan.budget.maxToolCalls} tool calls used`, recoverable: true, hint: 'raise it with agents plan execute --max-tool-calls N' }, 'constrained');
      }
      if (plan.usage.wallMs >= plan.budget.maxWallMs) {
        return this.fail(plan, turn, 'execute', { kind: 'budget', message: `budget exceeded: ${Math.round(plan.usage.wallMs / 1000)} s of ${Math.round(plan.budget.maxWallMs / 1000)} s wall time used`, recoverable: true, hint: 'raise it with agents plan execute --max-wall-seconds N' }, 'constrained');
      }
      // An answer recorded for this step in this attempt (answer() records it before resuming).
      const answered = decisions.filter((x) => x.type === 'approval' && x.parentId === d.id && x.attempt === plan.attempt).at(-1);
      if (tool.writes && plan.automationProfile === 'manual' && !yes && !answered) {
        const request = { kind: 'tool-call', planId: plan.id, decisionId: d.id, step: i + 1, of: plan.stepsTotal, tool: toolName, args, preview: previewOf(toolName, args), options: ['approve', 'reject', 'reject-with-guidance'] };
        awaitAnswer(plan, { kind: 'tool-approval', taskId: turn.task.id, decisionId: d.id, request });
        await this.save(plan);
        return turn.status('TASK_STATE_INPUT_REQUIRED', `Approve step ${i + 1}/${plan.stepsTotal}: ${toolName} ${argSummary(args)}? (approve / reject / reject with guidance)`, { data: { approvalRequest: request }, ...this.meta(plan) });
      }
      if (answered?.chosen === 'reject') {
        plan.cursor = i + 1;
        await this.save(plan);
        await turn.status('TASK_STATE_WORKING', `Step ${i + 1}/${plan.stepsTotal} skipped: rejected`, this.meta(plan));
        continue;
      }
      await turn.status('TASK_STATE_WORKING', `Step ${i + 1}/${plan.stepsTotal}: ${toolName} ${argSummary(args)}`, this.meta(plan, { step: i + 1 }));
      const t0 = Date.now();
      const remaining = Math.max(1000, plan.budget.maxWallMs - plan.usage.wallMs);
      const result = await this.deps.tools.run({ tool, args: normalizeArgs(toolName, args), sandbox, signal: turn.signal, timeoutMs: Math.min(this.deps.commandTimeoutMs ?? 300_000, remaining) });
      plan.usage.toolCalls++;
      await tick();
      const call: ToolCallRecord = {
        id: newId(),
        planId: plan.id,
        decisionId: d.id,
        tool: toolName,
        args,
        ok: result.ok && !turn.signal.aborted,
        summary: turn.signal.aborted ? 'cancelled' : result.summary,
        durationMs: Date.now() - t0,
        filesTouched: result.filesTouched,
        exitCode: result.exitCode ?? null,
        resource: sandbox.resource,
        createdAt: this.now().toISOString(),
      };
      if (turn.signal.aborted) {
        await this.deps.plans.putToolCall(call);
        return;
      }
      if (result.ok && tool.writes) {
        const cp = await this.checkpoint(plan, `after-step:${i + 1}`, i + 1, d.id);
        call.checkpointId = cp.id;
      }
      await this.deps.plans.putToolCall(call);
      await turn.artifact({ artifactId: 'execution-log', name: 'execution log', parts: [{ data: call, mediaType: 'application/json' }] }, { append: true });
      if (!result.ok) {
        return this.fail(plan, turn, 'execute', { kind: 'tool', message: `step ${i + 1} (${toolName}) failed: ${result.summary}`, recoverable: true, hint: `correct the plan (agents plan correct ${d.id} …) or fix the cause and run agents plan execute ${plan.id} to resume` });
      }
      plan.cursor = i + 1;
      await this.save(plan);
      await turn.status(
        'TASK_STATE_WORKING',
        `  ✓ ${result.summary} (${call.durationMs} ms)${call.checkpointId ? `, checkpoint ${call.checkpointId}` : ''}`,
        this.meta(plan, { step: i + 1, toolCall: call.id, checkpoint: call.checkpointId }),
      );
    }
    await this.checkpoint(plan, 'before-apply', plan.stepsTotal);
    const diffs = await this.diffs(plan);
    const stats = totalStats(diffs);
    await turn.artifact({
      artifactId: 'diff',
      name: 'diff',
      parts: [
        { text: diffs.map((x) => x.diff.unified).join(''), mediaType: 'text/x-diff' },
        { data: { stats, sandboxes: diffs.map((x) => ({ resource: x.resource, files: x.diff.files, stats: x.diff.stats })) }, mediaType: 'application/json' },
      ],
    });
    completePhase(plan);
    await tick();
    await this.save(plan);
    await turn.status('TASK_STATE_COMPLETED', `Executed ${plan.stepsTotal} step${plan.stepsTotal === 1 ? '' : 's'}: ${stats.files} file${stats.files === 1 ? '' : 's'} changed (+${stats.additions} −${stats.deletions}). Next: agents plan diff ${plan.id}, then agents plan apply ${plan.id}`, this.meta(plan));
  }

  private async applyChanges(plan: Plan, turn: TaskHandle, yes: boolean): Promise<void> {
    plan.tasks.apply = turn.task.id;
    plan.error = undefined;
    if (!yes && plan.automationProfile !== 'auto') {
      const diffs = await this.diffs(plan);
      const request = { kind: 'apply', planId: plan.id, stats: totalStats(diffs), files: diffs.flatMap((x) => x.diff.files.map((f) => `${f.status} ${f.path}`)), options: ['approve', 'reject'] };
      awaitAnswer(plan, { kind: 'apply-approval', taskId: turn.task.id, request });
      await this.save(plan);
      return turn.status('TASK_STATE_INPUT_REQUIRED', `Apply ${request.stats.files} changed file(s) to the project? (approve / reject)`, { data: { approvalRequest: request }, ...this.meta(plan) });
    }
    startPhase(plan, 'apply');
    await this.save(plan);
    await turn.status('TASK_STATE_WORKING', 'Applying the changes to the project', this.meta(plan));
    const applied: NonNullable<Plan['applied']>['commits'] = [];
    for (const sb of plan.sandboxes) {
      const outcome = await this.deps.sandboxes.apply(sb, `${plan.description}\n\nApplied by CleverAgents plan ${plan.id} (${plan.action}).`);
      if (!outcome.ok) {
        return this.fail(plan, turn, 'apply', {
          kind: outcome.reason,
          message: outcome.message,
          files: outcome.files,
          recoverable: true,
          hint:
            outcome.reason === 'dirty'
              ? `commit or stash your changes to ${outcome.files.join(', ')} (or check out ${sb.targetBranch ?? 'the target branch'}), then run agents plan apply ${plan.id}`
              : `the project changed the same lines since the plan started: resolve by hand, or roll back / correct the plan and apply again`,
        });
      }
      applied.push({ resource: sb.resource, commit: outcome.commit, files: outcome.files });
      await turn.status('TASK_STATE_WORKING', `Applied to ${sb.resource}${outcome.commit ? `: commit ${outcome.commit.slice(0, 12)}` : ''} (${outcome.files.length} file${outcome.files.length === 1 ? '' : 's'})`, this.meta(plan));
    }
    for (const sb of plan.sandboxes) await this.deps.sandboxes.remove(sb).catch((err: unknown) => this.deps.logger.warn({ err, planId: plan.id }, 'sandbox cleanup failed'));
    markApplied(plan, { at: this.now().toISOString(), commits: applied });
    await this.save(plan);
    await turn.status('TASK_STATE_COMPLETED', `Plan ${plan.id} applied`, this.meta(plan));
  }

  // ---- helpers used by the plan service ------------------------------------------------------

  async checkpoint(plan: Plan, label: string, stepIndex: number, decisionId?: string): Promise<Checkpoint> {
    const commits: Record<string, string> = {};
    for (const sb of plan.sandboxes) commits[sb.resource] = await this.deps.sandboxes.checkpoint(sb, label);
    const cp: Checkpoint = { id: newId(), planId: plan.id, label, commits, stepIndex, createdAt: this.now().toISOString() };
    if (decisionId) cp.decisionId = decisionId;
    await this.deps.plans.putCheckpoint(cp);
    return cp;
  }

  async restore(plan: Plan, cp: Checkpoint): Promise<void> {
    for (const sb of plan.sandboxes) {
      const commit = cp.commits[sb.resource];
      if (commit) await this.deps.sandboxes.restore(sb, commit);
    }
  }

  async diffs(plan: Plan): Promise<Array<{ resource: string; diff: SandboxDiff }>> {
    const out = [];
    for (const sb of plan.sandboxes) out.push({ resource: sb.resource, diff: await this.deps.sandboxes.diff(sb as SandboxInfo) });
    return out;
  }

  async record(plan: Plan, d: Omit<Decision, 'id' | 'planId' | 'attempt' | 'createdAt' | 'superseded' | 'confidence' | 'alternatives' | 'context'> & Partial<Pick<Decision, 'confidence' | 'alternatives' | 'context'>>): Promise<Decision> {
    const decision: Decision = {
      alternatives: [],
      confidence: 1,
      context: {},
      ...d,
      id: newId(),
      planId: plan.id,
      attempt: plan.attempt,
      superseded: false,
      createdAt: this.now().toISOString(),
    };
    await this.deps.plans.putDecision(decision);
    return decision;
  }

  meta(plan: Plan, extra: Record<string, unknown> = {}): { metadata: Record<string, unknown> } {
    return { metadata: { [PLAN_META]: { planId: plan.id, phase: plan.phase, state: plan.state, attempt: plan.attempt, stepsDone: plan.cursor, stepsTotal: plan.stepsTotal, ...extra } } };
  }

  async action(plan: Plan): Promise<ActionDefinition> {
    const a = await this.deps.registry.lookup('action', plan.action);
    if (!a) throw new Error(`action ${plan.action} no longer exists`);
    return a.definition as ActionDefinition;
  }

  async resources(plan: Plan): Promise<ResourceDefinition[]> {
    const out: ResourceDefinition[] = [];
    for (const p of plan.projects) {
      const project = (await this.deps.registry.lookup('project', p))?.definition as ProjectDefinition | undefined;
      for (const r of project?.resources ?? []) {
        const res = (await this.deps.registry.lookup('resource', r))?.definition as ResourceDefinition | undefined;
        if (res && !out.some((x) => x.name === res.name)) out.push(res);
      }
    }
    return out;
  }

  private async contextSnapshot(plan: Plan): Promise<Record<string, unknown>> {
    return {
      projects: plan.projects,
      resources: (await this.resources(plan)).map((r) => ({ name: r.name, type: r.type, path: r.path })),
      arguments: plan.arguments,
      definitionOfDone: plan.definitionOfDone,
    };
  }

  private async fail(plan: Plan, turn: TaskHandle | undefined, phase: Phase, error: PlanError, state: 'errored' | 'constrained' = 'errored'): Promise<never> {
    failPhase(plan, phase, error, state);
    await this.save(plan);
    const taskState: TaskState = 'TASK_STATE_FAILED';
    await turn?.status(taskState, error.message + (error.hint ? `\nHint: ${error.hint}` : ''), { data: { planError: error }, ...this.meta(plan) });
    throw new PlanStopped(error.message);
  }

  private async hold(planId: string, turn: TaskHandle, fn: (plan: Plan) => Promise<unknown>): Promise<void> {
    const plan = await this.load(planId);
    if (!plan) {
      await turn.status('TASK_STATE_FAILED', `Plan ${planId} was not found`);
      return;
    }
    this.open.set(planId, plan);
    this.running.add(planId);
    try {
      await fn(plan);
    } catch (err) {
      if (!(err instanceof PlanStopped)) {
        if (turn.signal.aborted) return;
        const refused = err instanceof AppError && err.reason === 'INVALID_STATE';
        if (refused) this.deps.logger.warn({ err, planId }, 'plan run refused a transition');
        else this.deps.logger.error({ err, planId }, 'plan run failed');
        const error: PlanError = { kind: 'internal', message: err instanceof Error ? err.message : String(err), recoverable: true, hint: `run agents plan execute ${planId} to resume from the last checkpoint` };
        // A refused transition changed nothing: the plan stays as it is; anything else stops the phase.
        if (!refused && plan.state === 'processing') {
          failPhase(plan, plan.phase, error);
          await this.save(plan);
        }
        await turn.status('TASK_STATE_FAILED', `Plan error: ${error.message}`, this.meta(plan));
      }
    } finally {
      this.running.delete(planId);
      this.open.delete(planId);
    }
  }
}

/** Raised to stop a run after its failure has been saved and reported. */
class PlanStopped extends Error {}

function totalStats(diffs: Array<{ diff: SandboxDiff }>): { files: number; additions: number; deletions: number } {
  return diffs.reduce((acc, d) => ({ files: acc.files + d.diff.stats.files, additions: acc.additions + d.diff.stats.additions, deletions: acc.deletions + d.diff.stats.deletions }), { files: 0, additions: 0, deletions: 0 });
}

/** `command: "prettier --write src"` for run-command becomes program + args (split, never shell-run). */
function normalizeArgs(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  if (!tool.endsWith('/run-command') || typeof args['command'] !== 'string') return args;
  const { command, ...rest } = args;
  const [program, ...words] = splitCommandLine(command as string);
  return { ...rest, program: program ?? '', args: words };
}

function argSummary(args: Record<string, unknown>): string {
  const s = Object.entries(args)
    .filter(([k]) => k !== 'content')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}

/** What a write would do, for an approval request. */
function previewOf(tool: string, args: Record<string, unknown>): string {
  const path = String(args['path'] ?? '');
  if (tool.endsWith('/write-file')) {
    const content = String(args['content'] ?? '');
    return [`+++ ${path}`, ...content.split('\n').slice(0, 40).map((l) => `+${l}`)].join('\n');
  }
  if (tool.endsWith('/edit-file')) return [`--- ${path}`, `+++ ${path}`, `-${String(args['find'] ?? '')}`, `+${String(args['replace'] ?? '')}`].join('\n');
  if (tool.endsWith('/run-command')) return `$ ${typeof args['command'] === 'string' ? args['command'] : [args['program'], ...((args['args'] as unknown[]) ?? [])].join(' ')}`;
  return JSON.stringify(args, null, 2);
}

/**
 * The slash commands of an ACP session: plan operations through the plan methods (never a message
 * to the actor). A phase is followed with the client's followPlan: its decisions become ACP
 * plan entries whose status follows the execution, its phase changes short message lines, its
 * approvals permission requests (with "always" where the run offers it) answered through the
 * client's answerPlan (plan/approve or plan/reject).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type {
  PermissionOption,
  RequestPermissionOutcome,
  SessionUpdate,
  StopReason,
  ToolCall,
  ToolCallUpdate,
} from '@agentclientprotocol/sdk';
import {
  answerPlan,
  approvalRequestOf,
  approvalWhat,
  dataOf,
  followPlan,
  planApply,
  planCancel,
  planDiff,
  planExecute,
  planStatus,
  planUse,
  type A2AClient,
  type ApprovalAnswer,
  type ApprovalRequest,
  type Message,
  type PlanPhase,
  type PlanStop,
  type Task,
} from '../../protocol/client/index.ts';
import { plural } from '../cli/render/definition.render.ts';
import type { PlanStatus } from '../cli/render/plan.render.ts';
import { connectionLost, runError } from '../cli/support/plan-follow.ts';
import { diffStatsOf, stepDecisions, waitingRun, type RunStart } from '../cli/support/plan-run.ts';
import {
  diffContent,
  entryText,
  ONCE,
  PlanEntries,
  planAnswerOf,
  planPermissionOptions,
  type PlanCommandName,
} from './plan-updates.ts';

/** What a session keeps of its plan between prompts. */
export interface PlanSession {
  readonly id: string;
  readonly root: string | undefined;
  readonly project: string | undefined;
  /** Changed by `/model`: later plans strategize with the session's actor as it is now. */
  actor: string | undefined;
  planId?: string | undefined;
  entries?: PlanEntries | undefined;
}

/** How a plan command talks to the editor and the backend, for one prompt. */
export interface PlanIo {
  client: A2AClient;
  /** Aborted when the prompt is cancelled (withdraws a pending permission request). */
  cancelling: AbortSignal;
  /** Aborted when a cancel could not reach the backend: following stops. */
  drop: AbortSignal;
  update(u: SessionUpdate): Promise<void>;
  /** Asks the editor; undefined when the request was cancelled. */
  permission(call: ToolCallUpdate, options: PermissionOption[]): Promise<RequestPermissionOutcome | undefined>;
  /** Cancels the prompt's running phase with `cancel` (session/cancel). */
  onCancel(cancel: () => Promise<unknown>): void;
}

/** How a phase ended: the prompt's stop reason, the plan's status, and whether it failed (said already). */
interface PhaseEnd {
  stop: StopReason;
  status: PlanStatus;
  task?: Task;
  failed: boolean;
}

export class PlanCommands {
  /** What resuming a waiting run needs: the signal, and a line saying it resumes. */
  private readonly resume: { signal: AbortSignal; ui: { info: (line: string) => void } };

  private readonly s: PlanSession;
  private readonly io: PlanIo;

  constructor(s: PlanSession, io: PlanIo) {
    this.s = s;
    this.io = io;
    this.resume = {
      signal: io.cancelling,
      ui: {
        info: (line) =>
          void io.update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `${line}\n` } }),
      },
    };
  }

  async run(name: PlanCommandName, arg: string): Promise<StopReason> {
    if (name === 'plan') return this.plan(arg);
    const planId = arg || this.s.planId;
    if (!planId) {
      await this.say(
        `There is no plan in this session yet: start one with /plan <goal> (or name one: /${name} PLAN_ID).`,
      );
      return 'end_turn';
    }
    if (planId !== this.s.planId) {
      this.s.planId = planId;
      this.s.entries = undefined;
    }
    if (name === 'execute') return this.execute(planId);
    if (name === 'diff') return this.diff(planId);
    if (name === 'apply') return this.apply(planId);
    const status = await this.io.client.call(planCancel, { planId });
    await this.say(`Plan ${planId}: ${status.phase}/${status.state}.`);
    return 'end_turn';
  }

  private async plan(goal: string): Promise<StopReason> {
    if (!this.s.project) {
      await this.say(
        "/plan needs a project, and this session has none: open the editor in a registered project's folder (agents project add), or start the bridge with agents acp --project NAME.",
      );
      return 'end_turn';
    }
    if (!goal) {
      await this.say('/plan needs a goal: /plan fix the failing date test');
      return 'end_turn';
    }
    const started = await this.io.client.call(planUse, {
      goal,
      projects: [this.s.project],
      ...(this.s.actor ? { actor: this.s.actor } : {}),
      wait: false,
    });
    this.s.planId = started.plan.planId;
    this.s.entries = undefined;
    const run = await this.phase(started);
    if (run.stop !== 'end_turn' || run.failed) return run.stop;
    await this.showEntries(run.status.planId);
    await this.say(`Plan ${run.status.planId} is ready: /execute runs it in a sandbox.`);
    return 'end_turn';
  }

  private async execute(planId: string): Promise<StopReason> {
    if (!this.s.entries) await this.showEntries(planId);
    const run = await this.phase(
      (await waitingRun(this.resume, this.io.client, planId, 'tool-approval')) ??
        (await this.io.client.call(planExecute, { planId, wait: false })),
    );
    if (run.stop !== 'end_turn' || run.failed) return run.stop;
    const stats = diffStatsOf(run.task);
    const changed = stats ? `${plural(stats.files, 'file')} changed (+${stats.additions} -${stats.deletions})` : '';
    await this.say(
      `Plan ${planId} executed${changed ? `: ${changed}` : ''}. /diff shows the changes, /apply applies them to the project.`,
    );
    return 'end_turn';
  }

  /** The plan's diff as a completed tool call: ACP diff content per file (the unified diff where texts cannot be built). */
  private async diff(planId: string): Promise<StopReason> {
    const d = await this.io.client.call(planDiff, { planId });
    if (d.source === 'none' || d.stats.files === 0) {
      await this.say(`Plan ${planId} has no changes yet${d.source === 'none' ? ': /execute it first' : ''}.`);
      return 'end_turn';
    }
    // Paths are relative to their resource: only a one-resource plan's are known to be under the session's folder.
    const root = d.sandboxes.length === 1 ? this.s.root : undefined;
    // An older server sends the unified text alone: shown as it is.
    const content = d.files
      ? diffContent(d.files, root, readText)
      : [{ type: 'content' as const, content: { type: 'text' as const, text: d.unified } }];
    await this.io.update({
      sessionUpdate: 'tool_call',
      toolCallId: `plan-diff-${planId}-${randomUUID()}`,
      title: `Changes of plan ${planId}: ${plural(d.stats.files, 'file')} (+${d.stats.additions} -${d.stats.deletions})`,
      kind: 'read',
      status: 'completed',
      content,
      locations: content.flatMap((c) => (c.type === 'diff' ? [{ path: c.path }] : [])),
      rawOutput: { source: d.source, stats: d.stats },
    });
    return 'end_turn';
  }

  /**
   * Asks first (the apply changes the project), then applies and reports the commit. An apply that
   * already waits for its approval is resumed: the plan's own request is asked.
   */
  private async apply(planId: string): Promise<StopReason> {
    const waiting = await waitingRun(this.resume, this.io.client, planId, 'apply-approval');
    if (waiting) return this.applied(planId, await this.phase(waiting));
    const status = await this.io.client.call(planStatus, { planId });
    const call: ToolCall = {
      toolCallId: `plan-apply-${planId}-${randomUUID()}`,
      title: `Apply plan ${planId} to ${status.projects.join(', ')}`,
      kind: 'edit',
      status: 'pending',
      rawInput: { planId, projects: status.projects },
    };
    await this.io.update({ sessionUpdate: 'tool_call', ...call });
    const answer = await this.ask(call, ONCE);
    if (answer === undefined) return 'cancelled';
    if (answer.decision === 'reject') {
      await this.io.update({ sessionUpdate: 'tool_call_update', toolCallId: call.toolCallId, status: 'failed' });
      await this.say(`Not applied: plan ${planId} stays ready to apply (/apply when you want it).`);
      return 'end_turn';
    }
    const run = await this.phase(await this.io.client.call(planApply, { planId, yes: true, wait: false }));
    await this.io.update({
      sessionUpdate: 'tool_call_update',
      toolCallId: call.toolCallId,
      status: run.failed ? 'failed' : 'completed',
    });
    return this.applied(planId, run);
  }

  /** The end of an apply: the commits it made. */
  private async applied(planId: string, run: PhaseEnd): Promise<StopReason> {
    if (run.stop !== 'end_turn' || run.failed) return run.stop;
    const commits = (run.status.applied?.commits ?? []).map(
      (c) => `${c.resource}: commit ${c.commit ?? 'none'} (${plural(c.files.length, 'file')})`,
    );
    await this.say(`Plan ${planId} applied${commits.length ? ` — ${commits.join('; ')}` : ''}.`);
    return 'end_turn';
  }

  /** The plan's decisions as entries, all pending. */
  private async showEntries(planId: string): Promise<void> {
    const steps = await stepDecisions(this.io.client, planId, this.io.cancelling);
    this.s.entries = new PlanEntries(steps.map(entryText));
    if (this.s.entries.size > 0) await this.io.update(this.s.entries.update());
  }

  /** Follows a started phase to its end; a failure is said (not thrown: the prompt itself went fine). */
  private async phase(started: RunStart): Promise<PhaseEnd> {
    const planId = started.plan.planId;
    const { client } = this.io;
    this.io.onCancel(() => client.call(planCancel, { planId, reason: 'cancelled from the editor' }));
    let shown = `${started.plan.phase}/${started.plan.state}`;
    await this.say(`Plan ${planId}: ${shown}`);
    /** Where the plan is (from a status event's metadata, or read after a snapshot): phase lines and entries. */
    const progress = async (p: PlanPhase): Promise<void> => {
      const now = `${p.phase}/${p.state}`;
      if (now !== shown) await this.say(`Plan ${planId}: ${now}`);
      shown = now;
      const moved = this.s.entries?.progress(p.phase, p.state, p.stepsDone);
      if (moved) await this.io.update(moved);
    };
    let stop: PlanStop = { task: undefined, approvals: [] };
    try {
      stop = await followPlan(client, started.taskId, this.io.drop, {
        message: (m) => this.thought(m),
        phase: progress,
        snapshot: async () => progress(phaseOfStatus(await client.call(planStatus, { planId }))),
        decide: (request, status) => this.decide(planId, request, status),
        send: (answer) => this.answered(planId, answer),
        lost: (err) => connectionLost(planId, started.taskId, err),
      });
    } catch (err) {
      // Dropped after a cancel the backend could not honour: the prompt ends cancelled all the same.
      if (!this.io.cancelling.aborted) throw err;
    }
    const status = await client.call(planStatus, { planId });
    await progress(phaseOfStatus(status));
    if (this.io.cancelling.aborted) return { stop: 'cancelled', status, failed: true };
    const task = stop.task ? { task: stop.task } : {};
    const err = runError(planId, stop);
    if (err) await this.say(err.hint ? `${err.message}\n${err.hint}` : err.message);
    return { stop: 'end_turn', status, failed: err !== undefined, ...task };
  }

  /** A progress line of the task as a thought; a plan error is said at the end, an approval's question asked instead. */
  private async thought(m: Message): Promise<void> {
    const text = (m.parts ?? []).map((x) => x.text ?? '').join('');
    if (!text || dataOf(m, 'planError') !== undefined || approvalRequestOf(m)) return;
    await this.io.update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `${text}\n` } });
  }

  /** The tool call a plan's approval is asked as (its update follows the answer). */
  private asking: string | undefined;

  /** A plan's approval as a permission request; undefined: not answerable here. */
  private async decide(
    planId: string,
    request: ApprovalRequest,
    status: Task['status'],
  ): Promise<ApprovalAnswer | undefined> {
    const call: ToolCall = {
      toolCallId: `plan-approval-${status.message?.messageId ?? randomUUID()}`,
      title: `Plan ${planId}: allow ${approvalWhat(request)}?`,
      kind: request.kind === 'apply' ? 'edit' : 'execute',
      status: 'pending',
      rawInput: request.args ?? { files: request.files ?? [] },
      ...(request.preview ? { content: [{ type: 'content', content: { type: 'text', text: request.preview } }] } : {}),
    };
    await this.io.update({ sessionUpdate: 'tool_call', ...call });
    const answer = await this.ask(call, planPermissionOptions(request));
    if (answer === undefined) return undefined;
    this.asking = call.toolCallId;
    return answer;
  }

  /** The answer given through the plan (plan/approve or plan/reject), and the permission's tool call updated. */
  private async answered(planId: string, answer: ApprovalAnswer): Promise<void> {
    await answerPlan(this.io.client, planId, answer);
    await this.io.update({
      sessionUpdate: 'tool_call_update',
      toolCallId: this.asking ?? '',
      status: answer.decision === 'approve' ? 'in_progress' : 'failed',
    });
  }

  /** The editor's answer to a permission request; undefined when it was cancelled. */
  private async ask(call: ToolCall, options: readonly PermissionOption[]): Promise<ApprovalAnswer | undefined> {
    const outcome = await this.io.permission(call, [...options]);
    if (!outcome || this.io.cancelling.aborted) return undefined;
    return planAnswerOf(outcome);
  }

  private say(text: string): Promise<void> {
    return this.io.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${text}\n` } });
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const phaseOfStatus = (s: PlanStatus): PlanPhase => ({
  planId: s.planId,
  phase: s.phase,
  state: s.state,
  stepsDone: s.progress.stepsDone,
});

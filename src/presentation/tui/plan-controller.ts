import {
  answerPlan,
  getTask,
  planApply,
  planApprove,
  planCancel,
  planCorrect,
  planDiff,
  planExecute,
  planList,
  planReject,
  planRollback,
  planStatus,
  planTree,
  planUse,
  subscribeToTask,
  watchPlan,
  type A2AClient,
  type Task,
} from '../../protocol/client/index.ts';
import { qualify } from '../cli/render/definition.render.ts';
import type { Guard } from './guard.ts';
import type { SlashCommand } from './slash.ts';
import { flattenTree, type LogEntry, type PlanStatus } from './state.ts';
import type { Store } from './store.ts';

/** Every method the plan views can call, for COMMAND_METHODS. */
export const PLAN_VIEW_CALLS = [
  planList,
  planStatus,
  planTree,
  planDiff,
  getTask,
  subscribeToTask,
  planUse,
  planExecute,
  planApply,
  planApprove,
  planReject,
  planRollback,
  planCorrect,
  planCancel,
] as const;

/**
 * The plans list and the plan view: the calls they make, and the open plan watched through the
 * client (watchPlan) while its view is on screen — read again when its task's events say it moved.
 */
export class PlanController {
  /** The open plan's watch; aborted when another plan opens, the view closes or the app ends. */
  private watch: AbortController | undefined;
  private closed = false;

  private readonly client: A2AClient;
  private readonly store: Store;
  private readonly guard: Guard;

  constructor(client: A2AClient, store: Store, guard: Guard) {
    this.client = client;
    this.store = store;
    this.guard = guard;
    // Nobody looks at a plan whose view is closed: its watch ends (switching back reads it again).
    store.subscribe(() => {
      if (store.get().view !== 'plan') this.stopWatching();
    });
  }

  loadPlans(): Promise<void> {
    return this.guard.run('plans', async () => {
      const r = await this.client.call(planList, { pageSize: 100 });
      this.store.dispatch({ type: 'plans', plans: r.plans });
    });
  }

  async open(planId: string): Promise<void> {
    this.store.dispatch({ type: 'open-plan', planId });
    await this.refresh(planId);
  }

  private get planId(): string | undefined {
    return this.store.get().plan.status?.planId;
  }

  /**
   * Reads the plan again (status, tree, execution log, and the diff when shown) and, while it
   * runs, watches it on; resolves once the plan as it is now is shown.
   */
  async refresh(planId = this.planId): Promise<void> {
    if (!planId || this.closed) return;
    this.stopWatching();
    const watch = new AbortController();
    this.watch = watch;
    let shown = (): void => undefined;
    const first = new Promise<void>((resolve) => (shown = resolve));
    const following = watchPlan(this.client, planId, watch.signal, {
      status: async (status) => {
        await this.show(status, watch.signal);
        shown();
      },
      task: (task) => this.liveLog(task, watch.signal),
      lost: (err) => (err instanceof Error ? err : new Error(String(err))),
    });
    // The watch outlives this call: its failure (a refused read, a lost agent) is reported when it happens.
    following.catch((err: unknown) => this.guard.report(err)).finally(shown);
    await this.guard.run('plan', () => first);
  }

  private stopWatching(): void {
    this.watch?.abort();
    this.watch = undefined;
  }

  /** The plan as `status` says, with its tree, execution log and (when shown) diff read now. */
  private async show(status: PlanStatus, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const [tree, log] = await Promise.all([
      this.guard.run('tree', () => this.client.call(planTree, { planId: status.planId })),
      this.executionLog(status),
    ]);
    if (signal.aborted) return;
    this.store.dispatch({ type: 'plan-data', status, ...(tree ? { decisions: tree.decisions } : {}), log });
    if (this.store.get().plan.showDiff) await this.loadDiff(true);
  }

  /** The execute task's tool calls as they come (between the status events that read it all again). */
  private liveLog(task: Task, signal: AbortSignal): void {
    const status = this.store.get().plan.status;
    if (signal.aborted || !status || status.tasks.execute !== task.id) return;
    this.store.dispatch({ type: 'plan-data', status, log: logOf(task) });
  }

  private async executionLog(status: PlanStatus): Promise<LogEntry[]> {
    const id = status.tasks.execute;
    if (!id) return [];
    const task = await this.guard.run('log', () => this.client.call(getTask, { id }));
    return task ? logOf(task) : [];
  }

  private async loadDiff(show: boolean): Promise<void> {
    const planId = this.planId;
    if (!planId) return;
    const d = await this.guard.run('diff', () => this.client.call(planDiff, { planId }));
    if (!d) return;
    this.store.dispatch({ type: 'diff', diff: d.unified, show });
    if (show && d.stats.files === 0)
      this.guard.info(d.source === 'none' ? 'no changes yet: the plan has not executed' : 'no changes');
  }

  toggleDiff(): Promise<void> {
    const p = this.store.get().plan;
    if (p.showDiff) {
      this.store.dispatch({ type: 'diff', diff: p.diff, show: false });
      return Promise.resolve();
    }
    return this.loadDiff(true);
  }

  /** `/plan use …`: creates the plan (it strategizes) and opens it. */
  async use(cmd: Extract<SlashCommand, { name: 'plan-use' }>): Promise<void> {
    const run = await this.guard.run('plan use', () =>
      this.client.call(planUse, {
        ...(cmd.action ? { action: qualify(cmd.action) } : {}),
        ...(cmd.goal !== undefined ? { goal: cmd.goal } : {}),
        projects: cmd.projects.map(qualify),
        ...(Object.keys(cmd.args).length ? { arguments: cmd.args } : {}),
        ...(cmd.profile ? { automationProfile: cmd.profile } : {}),
        ...(cmd.actor ? { actor: qualify(cmd.actor) } : {}),
        ...(cmd.strategyActor ? { strategyActor: qualify(cmd.strategyActor) } : {}),
        ...(cmd.executionActor ? { executionActor: qualify(cmd.executionActor) } : {}),
        wait: false,
      }),
    );
    if (!run) return;
    this.guard.info(`plan ${run.plan.planId} created; it strategizes`);
    await this.open(run.plan.planId);
  }

  /**
   * A phase operation on the open plan (`fn` answers what it did, for the status line), then the
   * plan read again (and followed while it runs). What it did is said once the view shows the plan
   * as it is now, never next to the state from before the operation.
   */
  private async act(what: string, fn: (planId: string, s: PlanStatus) => Promise<string>): Promise<void> {
    const s = this.store.get().plan.status;
    if (!s) return this.guard.info('open a plan first: /plans, or /plan <id>');
    const done = await this.guard.run(what, () => fn(s.planId, s));
    await this.refresh(s.planId);
    if (done !== undefined) this.guard.info(done);
  }

  execute = (): Promise<void> =>
    this.act('execute', async (planId) => {
      await this.client.call(planExecute, { planId, wait: false });
      return `executing plan ${planId} in its sandbox`;
    });

  apply = (): Promise<void> =>
    this.act('apply', async (planId) => {
      await this.client.call(planApply, { planId, wait: false });
      return `applying plan ${planId}`;
    });

  cancel = (): Promise<void> =>
    this.act('cancel', async (planId) => {
      const r = await this.client.call(planCancel, { planId });
      return `cancelled plan ${planId}${r.sandboxes.length ? `; sandbox kept for inspection: ${r.sandboxes.map((b) => b.root).join(', ')}` : ''}`;
    });

  approve(): Promise<void> {
    return this.act('approve', async (planId, s) => {
      if (!s.waiting) throw nothingWaits(planId);
      await answerPlan(this.client, planId, { decision: 'approve' });
      return `approved: plan ${planId} goes on`;
    });
  }

  reject(guidance?: string): Promise<void> {
    return this.act('reject', async (planId, s) => {
      if (!s.waiting) throw nothingWaits(planId);
      await answerPlan(this.client, planId, { decision: 'reject', ...(guidance?.trim() ? { guidance } : {}) });
      return `rejected${guidance?.trim() ? ' with guidance' : ''}: plan ${planId} goes on without it`;
    });
  }

  /** To the checkpoint named, else one step back: the latest checkpoint taken before the last step done. */
  rollback(checkpoint?: string): Promise<void> {
    return this.act('rollback', async (planId, s) => {
      const back = s.checkpoints.filter((c) => c.stepIndex < s.progress.stepsDone).at(-1) ?? s.checkpoints.at(-1);
      const id = checkpoint ?? back?.id;
      if (!id) throw new Error(`plan ${planId} has no checkpoint yet: it has not executed`);
      const r = await this.client.call(planRollback, { checkpointId: id, planId });
      const label = s.checkpoints.find((c) => c.id === id)?.label ?? id;
      return `rolled back to checkpoint ${label}; e resumes at step ${r.progress.stepsDone + 1}/${r.progress.stepsTotal}`;
    });
  }

  /** Corrects the decision selected in the tree. */
  correct(guidance: string, mode: 'revert' | 'append'): Promise<void> {
    return this.act('correct', async (planId) => {
      const p = this.store.get().plan;
      const d = flattenTree(p.decisions)[p.selected]?.d;
      if (!d) throw new Error(`plan ${planId} has no decision to correct yet`);
      const r = await this.client.call(planCorrect, { decisionId: d.id, mode, guidance, planId });
      const note = 'note' in r && r.note ? `: ${r.note}` : '';
      return `corrected decision ${d.id} (${mode}, attempt ${r.attempt})${note}`;
    });
  }

  close(): void {
    this.closed = true;
    this.stopWatching();
  }
}

const nothingWaits = (planId: string): Error => new Error(`plan ${planId} does not wait for an approval`);

/** The execute task's tool calls, from its `execution-log` artifact (one data part per call). */
export function logOf(task: Task): LogEntry[] {
  const log = task.artifacts?.find((a) => a.artifactId === 'execution-log');
  return (log?.parts ?? []).flatMap((p) => {
    const c = p.data as Partial<LogEntry> | undefined;
    if (!c || typeof c.tool !== 'string') return [];
    return [
      {
        tool: c.tool,
        ok: c.ok === true,
        summary: c.summary ?? '',
        filesTouched: c.filesTouched ?? [],
        checkpointId: c.checkpointId,
        decisionId: typeof c.decisionId === 'string' ? c.decisionId : undefined,
        outputTail: typeof c.outputTail === 'string' ? c.outputTail : undefined,
      },
    ];
  });
}

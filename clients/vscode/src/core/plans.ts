import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  actionRegistry,
  applyHunks,
  diffPath,
  followPlan,
  hunkTexts,
  planApply,
  planApprove,
  planCancel,
  planDiff,
  planExecute,
  planList,
  planReject,
  planStatus,
  planTree,
  planUse,
  projectRegistry,
  resourceRegistry,
  type DiffFile,
  type ResultOf,
} from '../../../../src/protocol/client/index.ts';
import type { Connection } from './connection.ts';

export type PlanStatus = ResultOf<typeof planStatus>;
export type PlanRun = ResultOf<typeof planExecute>;
type DecisionNode = ResultOf<typeof planTree>['decisions'][number];
type ActionEntity = ResultOf<typeof actionRegistry.list>['items'][number];
export type ArgumentSpec = NonNullable<ActionEntity['definition']['arguments']>[string];
export type ArgumentValue = string | number | boolean;

/** An action a plan can be made from, with the arguments it takes. */
export interface ActionChoice {
  name: string;
  description: string;
  arguments: Array<{ name: string; spec: ArgumentSpec }>;
}

/**
 * What the user typed for an action's argument, as the value the action takes: a number, an
 * integer, a boolean, one of its listed values; empty means its default (or nothing, if optional).
 */
export function argumentValue(
  spec: ArgumentSpec,
  text: string,
): { value: ArgumentValue | undefined } | { error: string } {
  const t = text.trim();
  if (t === '') return spec.required && spec.default === undefined ? { error: 'is required' } : { value: undefined };
  let value: ArgumentValue = t;
  if (spec.type === 'number' || spec.type === 'integer') {
    const n = Number(t);
    if (!Number.isFinite(n)) return { error: 'must be a number' };
    if (spec.type === 'integer' && !Number.isInteger(n)) return { error: 'must be a whole number' };
    value = n;
  } else if (spec.type === 'boolean') {
    if (!/^(true|false|yes|no)$/i.test(t)) return { error: 'must be true or false' };
    value = /^(true|yes)$/i.test(t);
  }
  if (spec.enum && !spec.enum.some((e) => e === value))
    return { error: `must be one of ${spec.enum.map(String).join(', ')}` };
  return { value };
}

/**
 * One row of the plans tree. `contextValue` says which item menus apply: the operations the plan
 * allows now (`plan:approve:apply:cancel:`), so the menus' `when` clauses match on `:approve:`.
 */
export interface PlanTreeItem {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  kind: 'plan' | 'decision' | 'info';
  planId: string;
  contextValue: string;
  icon: string;
  collapsible: boolean;
}

/** Each changed file's two sides for the diff editor. */
export interface FileDiffTexts {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  original: string;
  modified: string;
  /** false: only the hunks could be shown (neither side's full text was readable). */
  complete: boolean;
  binary: boolean;
}

const RUNNING_STATES = new Set(['queued', 'processing']);

/** Whether a plan is running now (a phase queued or processing). */
export const isRunning = (p: PlanStatus): boolean => p.running || RUNNING_STATES.has(p.state);

const ICONS: Record<string, string> = {
  processing: 'sync~spin',
  queued: 'clock',
  complete: 'pass',
  errored: 'error',
  constrained: 'warning',
  cancelled: 'circle-slash',
  applied: 'check-all',
};

/** The plan as a tree row: name, then phase and state, and what it waits for. */
export function planItem(p: PlanStatus): PlanTreeItem {
  const waiting = p.waiting ? (p.waiting.kind === 'apply-approval' ? ' · waits: apply' : ' · waits: approval') : '';
  const steps = p.progress.stepsTotal > 0 ? ` · ${p.progress.stepsDone}/${p.progress.stepsTotal}` : '';
  const lines = [
    `${p.name} (${p.planId})`,
    `action ${p.action} · projects ${p.projects.join(', ')}`,
    `phase ${p.phase}, ${p.state}${steps}`,
    ...(p.error ? [`error: ${p.error.message}${p.error.hint ? ` — ${p.error.hint}` : ''}`] : []),
    ...(p.allowed.length > 0 ? [`allowed: ${p.allowed.join(', ')}`] : []),
  ];
  return {
    id: p.planId,
    label: p.name,
    description: `${p.phase} · ${p.state}${steps}${waiting}`,
    tooltip: lines.join('\n'),
    kind: 'plan',
    planId: p.planId,
    contextValue: `plan:${p.allowed.map((a) => `${a}:`).join('')}${p.phase === 'execute' || p.state === 'applied' ? 'diff:' : ''}`,
    icon: p.waiting ? 'bell-dot' : (ICONS[p.state] ?? 'circle-outline'),
    collapsible: true,
  };
}

function decisionItem(d: DecisionNode): PlanTreeItem {
  const chosen =
    typeof d.chosen === 'string' ? d.chosen : `${d.chosen.tool} ${Object.keys(d.chosen.args ?? {}).join(' ')}`.trim();
  return {
    id: `${d.planId}/${d.id}`,
    label: d.question,
    description: `${d.type} · ${chosen}`,
    tooltip: `${d.question}\n${chosen}\nconfidence ${Math.round(d.confidence * 100)}%${d.rationale ? `\n${d.rationale}` : ''}`,
    kind: 'decision',
    planId: d.planId,
    contextValue: 'decision',
    icon: d.type === 'step' ? 'debug-step-over' : d.type === 'approval' ? 'check' : 'lightbulb',
    collapsible: d.children.length > 0,
  };
}

/**
 * The plans view's logic: the list and each plan's decision tree as rows, the plan operations,
 * a plan's diff as per-file texts, and a follow of a phase's task that reports each change.
 */
export class PlansController {
  private decisions = new Map<string, DecisionNode[]>();
  private readonly listeners = new Set<() => void>();

  private readonly conn: Connection;

  constructor(conn: Connection) {
    this.conn = conn;
  }

  /** Called when a plan may have changed (an operation ended, a followed task moved). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async list(): Promise<PlanStatus[]> {
    const r = await this.conn.with((c) => c.call(planList, { pageSize: 100 }));
    return r.plans;
  }

  /** The rows under a row: plans at the top, then a plan's decision tree, level by level. */
  async children(parent?: PlanTreeItem): Promise<PlanTreeItem[]> {
    if (!parent) return (await this.list()).map(planItem);
    if (parent.kind === 'plan') {
      const tree = await this.conn.with((c) => c.call(planTree, { planId: parent.planId }));
      this.decisions.set(parent.planId, tree.decisions);
      if (tree.decisions.length === 0)
        return [{ ...infoRow(parent.planId, 'no decisions yet'), id: `${parent.planId}/none` }];
      return tree.decisions.map(decisionItem);
    }
    if (parent.kind === 'decision') {
      const id = parent.id.slice(parent.planId.length + 1);
      const found = findDecision(this.decisions.get(parent.planId) ?? [], id);
      return (found?.children ?? []).map(decisionItem);
    }
    return [];
  }

  /** The actions a plan can be made from (for a picker). */
  async actions(): Promise<ActionChoice[]> {
    const r = await this.conn.with((c) => c.call(actionRegistry.list, { pageSize: 200 }));
    return r.items.map((a) => ({
      name: a.name,
      description: a.definition.description ?? a.definition.descriptionTemplate,
      arguments: Object.entries(a.definition.arguments ?? {}).map(([name, spec]) => ({ name, spec })),
    }));
  }

  /** The projects a plan can work on (for a picker). */
  async projects(): Promise<Array<{ name: string; description: string }>> {
    const r = await this.conn.with((c) => c.call(projectRegistry.list, { pageSize: 200 }));
    return r.items.map((p) => ({ name: p.name, description: p.definition.description ?? '' }));
  }

  /** Makes a plan from an action on a project and strategizes it (read-only); execute comes next. */
  async use(action: string, project: string, args: Record<string, ArgumentValue>): Promise<PlanRun> {
    return this.started(
      await this.conn.with((c) => c.call(planUse, { action, projects: [project], arguments: args, wait: true })),
    );
  }

  status(planId: string): Promise<PlanStatus> {
    return this.conn.with((c) => c.call(planStatus, { planId }));
  }

  /** Runs (or resumes) the execute phase; the run goes on in the agent, followed until it settles. */
  async execute(planId: string): Promise<PlanRun> {
    return this.started(await this.conn.with((c) => c.call(planExecute, { planId, wait: false })));
  }

  /** Approves what the plan waits for (a tool call, or the apply), and follows its run on. */
  async approve(planId: string): Promise<PlanRun> {
    return this.started(await this.conn.with((c) => c.call(planApprove, { planId, wait: false })));
  }

  async reject(planId: string, guidance?: string): Promise<PlanRun> {
    const g = guidance?.trim();
    return this.started(
      await this.conn.with((c) => c.call(planReject, { planId, wait: true, ...(g ? { guidance: g } : {}) })),
    );
  }

  /** Merges the sandbox into the project (the user confirmed it, hence `yes`); waits for the commit. */
  async apply(planId: string): Promise<PlanRun> {
    return this.started(await this.conn.with((c) => c.call(planApply, { planId, yes: true, wait: true })));
  }

  async cancel(planId: string, reason?: string): Promise<PlanStatus> {
    const r = await this.conn.with((c) => c.call(planCancel, { planId, ...(reason ? { reason } : {}) }));
    this.changed();
    return r;
  }

  /**
   * The plan's changed files, each as its two full texts when one side can be read on this machine
   * (the sandbox's file, else the project's), the other side rebuilt from the patch; otherwise
   * the hunks alone (server mode, or a file that has changed since).
   */
  async diffTexts(planId: string): Promise<FileDiffTexts[]> {
    const [diff, status] = await Promise.all([
      this.conn.with((c) => c.call(planDiff, { planId })),
      this.status(planId),
    ]);
    const roots =
      diff.source === 'applied'
        ? await this.checkouts(diff.sandboxes.map((s) => s.resource))
        : status.sandboxes.map((s) => ({ resource: s.resource, sandbox: s.root, source: s.source }));
    const out: FileDiffTexts[] = [];
    for (const file of diff.files ?? []) {
      const path = diffPath(file);
      if (file.binary) {
        out.push({ path, status: file.status, original: '', modified: '', complete: false, binary: true });
        continue;
      }
      // The file's own resource, when the server names it; else any of the plan's.
      const homes = roots.filter((r) => file.resource === undefined || r.resource === file.resource);
      out.push({ path, status: file.status, binary: false, ...(await sides(file, homes, diff.source === 'applied')) });
    }
    return out;
  }

  /**
   * Follows a phase's task until it settles or waits, telling listeners at each status change
   * (the view refreshes, the status bar counts). Ends quietly if the stream breaks.
   */
  async follow(taskId: string): Promise<void> {
    try {
      const client = await this.conn.client();
      await followPlan(client, taskId, new AbortController().signal, {
        event: (_seq, event) => {
          if ('statusUpdate' in event || 'task' in event) this.changed();
        },
        // An approval is answered from the plans view (approve, reject): following stops there.
        decide: () => Promise.resolve(undefined),
        lost: (err) => (err instanceof Error ? err : new Error(String(err))),
      });
    } catch {
      // A lost connection ends following; the refresh below shows where the plan is.
    }
    this.changed();
  }

  /** Where an applied plan's resources are checked out (its sandboxes are gone). */
  private async checkouts(resources: string[]): Promise<Root[]> {
    const out: Root[] = [];
    for (const name of new Set(resources)) {
      const shown = await this.conn.with((c) => c.call(resourceRegistry.show, { name })).catch(() => undefined);
      const path = shown && 'path' in shown.definition ? shown.definition.path : undefined;
      if (typeof path === 'string') out.push({ resource: name, sandbox: path, source: path });
    }
    return out;
  }

  private started(run: PlanRun): PlanRun {
    this.changed();
    if (run.plan.running) void this.follow(run.taskId);
    return run;
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}

function infoRow(planId: string, label: string): PlanTreeItem {
  return {
    id: `${planId}/info`,
    label,
    description: '',
    tooltip: label,
    kind: 'info',
    planId,
    contextValue: 'info',
    icon: 'info',
    collapsible: false,
  };
}

function findDecision(nodes: readonly DecisionNode[], id: string): DecisionNode | undefined {
  for (const n of nodes) {
    if (n.id === id) return n;
    const inner = findDecision(n.children, id);
    if (inner) return inner;
  }
  return undefined;
}

const readText = async (path: string): Promise<string | undefined> => {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** Where a resource's two sides are on this machine: its sandbox and its project (after apply, both the project). */
interface Root {
  resource: string;
  sandbox: string;
  source: string;
}

async function sides(
  file: DiffFile,
  roots: readonly Root[],
  applied: boolean,
): Promise<{ original: string; modified: string; complete: boolean }> {
  // Before apply the sandbox holds the new side and the project the old; after apply, the project the new.
  const newHomes = applied ? roots.map((r) => r.source) : roots.map((r) => r.sandbox);
  const oldHomes = applied ? [] : roots.map((r) => r.source);
  if (file.newPath === null) {
    for (const home of oldHomes) {
      const original = await readText(join(home, file.oldPath ?? ''));
      if (original !== undefined && applyHunks(original, file, true) === '')
        return { original, modified: '', complete: true };
    }
  } else {
    for (const home of newHomes) {
      const modified = await readText(join(home, file.newPath));
      const original = modified === undefined ? undefined : applyHunks(modified, file, false);
      if (modified !== undefined && original !== undefined) return { original, modified, complete: true };
    }
    if (file.oldPath !== null)
      for (const home of oldHomes) {
        const original = await readText(join(home, file.oldPath));
        const modified = original === undefined ? undefined : applyHunks(original, file, true);
        if (original !== undefined && modified !== undefined) return { original, modified, complete: true };
      }
  }
  return { ...hunkTexts(file), complete: false };
}

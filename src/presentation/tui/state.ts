import type { planStatus, planTree, ResultOf, Session, Task } from '../../protocol/client/index.ts';
import type { ErrorReport } from '../cli/render/error.render.ts';
import type { ApprovalRequest } from '../../protocol/client/index.ts';

export type View = 'sessions' | 'chat' | 'plans' | 'plan';
export const VIEWS: readonly View[] = ['sessions', 'chat', 'plans', 'plan'];

export type PlanStatus = ResultOf<typeof planStatus>;
export type Decision = ResultOf<typeof planTree>['decisions'][number];

/** A line in the status bar: what went wrong (with the agent's hint) or what just happened. */
export type Notice = { level: 'info'; text: string } | { level: 'error'; report: ErrorReport };

/** One exchange of the chat: what the user sent and the task that answers it, as folded so far. */
export interface Turn {
  key: string;
  input: string;
  task?: Task | undefined;
  error?: ErrorReport | undefined;
  /** Shown from the session's history when it was opened (not sent in this run). */
  recap?: boolean;
  /** A chat command's answer (`/cost`, `/diff`, …): shown in the chat, never sent to the actor. */
  system?: SystemAnswer | undefined;
}

/** What a chat command answered, as the chat pane shows it. */
export interface SystemAnswer {
  /** The command as typed. */
  command: string;
  text: string;
  /** The text is a unified diff (coloured as one). */
  diff?: boolean;
}

/** An approval the chat waits for: on which task, and what the agent asks. */
export interface PendingApproval {
  taskId: string;
  contextId: string;
  request: ApprovalRequest;
  question: string;
}

/** One tool call of a plan's execution log (the execute task's `execution-log` artifact). */
export interface LogEntry {
  tool: string;
  ok: boolean;
  summary: string;
  filesTouched: string[];
  checkpointId?: string | undefined;
  /** The decision (step) it was made for. */
  decisionId?: string | undefined;
  /** A command's last lines of output (the plan's record keeps all of it). */
  outputTail?: string | undefined;
}

export interface PlanPane {
  status?: PlanStatus | undefined;
  decisions: Decision[];
  log: LogEntry[];
  diff?: string | undefined;
  showDiff: boolean;
  /** First line on screen of the diff (or of the plan view, when the diff is off). */
  scroll: number;
  /** The decision `/correct` and the `c` key correct (index into the flattened active tree). */
  selected: number;
}

/** What the input line is typing: a chat message or slash command, or an answer the view asked for. */
export type InputMode = 'line' | 'guidance' | 'correct' | 'none';

export interface TuiState {
  view: View;
  help: boolean;
  /** First line of the help overlay on screen. */
  helpScroll: number;
  sessions: Session[];
  sessionIndex: number;
  plans: PlanStatus[];
  planIndex: number;
  session?: Session | undefined;
  turns: Turn[];
  streaming: boolean;
  approval?: PendingApproval | undefined;
  plan: PlanPane;
  input: string;
  inputMode: InputMode;
  /** The list's deletion waits for y / n. */
  confirmDelete?: { id: string } | undefined;
  notice?: Notice | undefined;
  busy?: string | undefined;
  /** Ctrl-C was pressed with nothing to cancel or clear: pressed again right away, it leaves. */
  leaveArmed?: boolean;
}

export const initialState = (): TuiState => ({
  view: 'sessions',
  help: false,
  helpScroll: 0,
  sessions: [],
  sessionIndex: 0,
  plans: [],
  planIndex: 0,
  turns: [],
  streaming: false,
  plan: emptyPlan(),
  input: '',
  inputMode: 'none',
});

const emptyPlan = (): PlanPane => ({ decisions: [], log: [], showDiff: false, scroll: 0, selected: 0 });

export type Action =
  | { type: 'view'; view: View }
  | { type: 'help'; open: boolean }
  | { type: 'help-scroll'; delta: number; max: number }
  | { type: 'sessions'; sessions: Session[] }
  | { type: 'select'; list: 'sessions' | 'plans'; delta: number }
  | { type: 'plans'; plans: PlanStatus[] }
  | { type: 'open-session'; session: Session; recap: Task[] }
  | { type: 'turn-start'; turn: Turn }
  | { type: 'system'; answer: SystemAnswer }
  | { type: 'session'; session: Session }
  | { type: 'turn-update'; key: string; task?: Task | undefined; error?: ErrorReport | undefined }
  | { type: 'streaming'; on: boolean }
  | { type: 'approval'; approval: PendingApproval | undefined }
  | { type: 'open-plan'; planId: string }
  | { type: 'plan-data'; status: PlanStatus; decisions?: Decision[]; log?: LogEntry[] }
  | { type: 'diff'; diff: string | undefined; show: boolean }
  | { type: 'scroll'; delta: number; max: number }
  | { type: 'select-decision'; delta: number }
  | { type: 'input'; text: string; mode?: InputMode }
  | { type: 'confirm-delete'; session: { id: string } | undefined }
  | { type: 'notice'; notice: Notice | undefined }
  | { type: 'busy'; what: string | undefined }
  | { type: 'leave-armed'; on: boolean };

const clamp = (n: number, lo: number, hi: number): number => Math.max(lo, Math.min(hi, n));

/** Every change of the TUI's state, in one place (the controller and the keys dispatch these). */
export function reduce(s: TuiState, a: Action): TuiState {
  switch (a.type) {
    case 'view':
      return { ...s, view: a.view, help: false, confirmDelete: undefined, inputMode: inputModeOf(a.view, s) };
    case 'help':
      return { ...s, help: a.open, helpScroll: 0 };
    case 'help-scroll':
      return { ...s, helpScroll: clamp(s.helpScroll + a.delta, 0, Math.max(0, a.max)) };
    case 'sessions':
      return { ...s, sessions: a.sessions, sessionIndex: clamp(s.sessionIndex, 0, Math.max(0, a.sessions.length - 1)) };
    case 'plans':
      return { ...s, plans: a.plans, planIndex: clamp(s.planIndex, 0, Math.max(0, a.plans.length - 1)) };
    case 'select':
      return a.list === 'sessions'
        ? { ...s, sessionIndex: clamp(s.sessionIndex + a.delta, 0, Math.max(0, s.sessions.length - 1)) }
        : { ...s, planIndex: clamp(s.planIndex + a.delta, 0, Math.max(0, s.plans.length - 1)) };
    case 'open-session':
    case 'turn-start':
    case 'system':
    case 'session':
    case 'turn-update':
    case 'streaming':
    case 'approval':
      return reduceChat(s, a);
    case 'open-plan':
    case 'plan-data':
    case 'diff':
    case 'scroll':
    case 'select-decision':
      return reducePlan(s, a);
    case 'input':
      return { ...s, input: a.text, ...(a.mode ? { inputMode: a.mode } : {}) };
    case 'confirm-delete':
      return { ...s, confirmDelete: a.session };
    case 'notice':
      return { ...s, notice: a.notice };
    case 'busy':
      return { ...s, busy: a.what };
    case 'leave-armed':
      return { ...s, leaveArmed: a.on };
  }
}

/** The chat view's changes: the session open, its turns, and the approval it waits for. */
function reduceChat(
  s: TuiState,
  a: Extract<
    Action,
    { type: 'open-session' | 'turn-start' | 'system' | 'session' | 'turn-update' | 'streaming' | 'approval' }
  >,
): TuiState {
  switch (a.type) {
    case 'open-session':
      return {
        ...s,
        view: 'chat',
        help: false,
        session: a.session,
        turns: a.recap.map((t) => ({ key: t.id, input: '', task: t, recap: true })),
        approval: undefined,
        streaming: false,
        inputMode: 'line',
        input: '',
      };
    case 'turn-start':
      return { ...s, turns: [...s.turns, a.turn], streaming: true, approval: undefined };
    case 'system':
      // Keyed by position: answers are never updated, only added after the turns so far.
      return { ...s, turns: [...s.turns, { key: `system-${s.turns.length}`, input: '', system: a.answer }] };
    case 'session':
      // The open session changed on the agent (`/model`): the same chat goes on with it.
      return s.session?.id === a.session.id ? { ...s, session: a.session } : s;
    case 'turn-update':
      return {
        ...s,
        turns: s.turns.map((t) =>
          t.key === a.key ? { ...t, ...(a.task ? { task: a.task } : {}), ...(a.error ? { error: a.error } : {}) } : t,
        ),
      };
    case 'streaming':
      return { ...s, streaming: a.on };
    case 'approval':
      return { ...s, approval: a.approval, inputMode: a.approval ? 'none' : s.view === 'chat' ? 'line' : s.inputMode };
  }
}

/** The plan view's changes: the plan open, its data, the diff, scrolling and the selected decision. */
function reducePlan(
  s: TuiState,
  a: Extract<Action, { type: 'open-plan' | 'plan-data' | 'diff' | 'scroll' | 'select-decision' }>,
): TuiState {
  switch (a.type) {
    case 'open-plan':
      return {
        ...s,
        view: 'plan',
        help: false,
        plan: s.plan.status?.planId === a.planId ? s.plan : emptyPlan(),
        inputMode: 'none',
      };
    case 'plan-data': {
      if (s.plan.status && s.plan.status.planId !== a.status.planId && s.view === 'plan') return s;
      const decisions = a.decisions ?? s.plan.decisions;
      return {
        ...s,
        notice: followedNotice(s.notice, s.plan.status, a.status),
        plan: {
          ...s.plan,
          status: a.status,
          decisions,
          log: a.log ?? s.plan.log,
          selected: clamp(s.plan.selected, 0, Math.max(0, flattenTree(decisions).length - 1)),
        },
      };
    }
    case 'diff':
      return {
        ...s,
        plan: { ...s.plan, diff: a.diff, showDiff: a.show, scroll: a.show === s.plan.showDiff ? s.plan.scroll : 0 },
      };
    case 'scroll':
      return { ...s, plan: { ...s.plan, scroll: clamp(s.plan.scroll + a.delta, 0, Math.max(0, a.max)) } };
    case 'select-decision':
      return {
        ...s,
        plan: {
          ...s.plan,
          selected: clamp(s.plan.selected + a.delta, 0, Math.max(0, flattenTree(s.plan.decisions).length - 1)),
        },
      };
  }
}

/**
 * The status line follows the open plan: what an operation said ("executing plan … in its
 * sandbox") is replaced by where the plan is once its phase, state or waiting changes — else the
 * line would go on saying it executes long after it finished. An error stays until read over.
 */
function followedNotice(
  notice: Notice | undefined,
  before: PlanStatus | undefined,
  now: PlanStatus,
): Notice | undefined {
  if (notice?.level === 'error' || before?.planId !== now.planId) return notice;
  const moved =
    before.phase !== now.phase ||
    before.state !== now.state ||
    before.running !== now.running ||
    before.waiting?.taskId !== now.waiting?.taskId;
  return moved ? { level: 'info', text: planNoticeText(now) } : notice;
}

/** Where a plan is, in one line: its phase and state, and what it waits for, stopped on or landed. */
export function planNoticeText(s: PlanStatus): string {
  const at = `plan ${s.planId} ${s.phase}/${s.state}`;
  if (s.waiting) return `${at}: waits for your answer (y approve · n reject)`;
  if (s.error) return `${at}: ${s.error.message}`;
  if (s.state === 'applied') {
    const commits = (s.applied?.commits ?? []).filter((c) => c.commit);
    return commits.length
      ? `${at}: ${commits.map((c) => `${c.resource} commit ${(c.commit ?? '').slice(0, 12)}`).join(', ')}`
      : `${at}: nothing was applied (no file changed)`;
  }
  return `${at}${s.running ? ' (running)' : ''}`;
}

/** The chat types into the line at once; elsewhere `/` opens it. */
const inputModeOf = (view: View, s: TuiState): InputMode => (view === 'chat' && !s.approval ? 'line' : 'none');

/** The tree as a list, depth-first, with each decision's depth (superseded ones are not in it). */
export function flattenTree(decisions: readonly Decision[]): Array<{ d: Decision; depth: number }> {
  const out: Array<{ d: Decision; depth: number }> = [];
  const walk = (d: Decision, depth: number): void => {
    out.push({ d, depth });
    for (const c of d.children) walk(c, depth + 1);
  };
  for (const d of decisions) walk(d, 0);
  return out;
}

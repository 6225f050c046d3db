import { randomUUID } from 'node:crypto';
import {
  actorRegistry,
  cancelTask,
  sendStreamingMessage,
  sessionCreate,
  sessionList,
  sessionResume,
  type Artifact,
  type Message,
  type Part,
  type Session,
  type StreamResponse,
  type Task,
  type TaskState,
} from '../../../../src/protocol/client/index.ts';
import type { Connection } from './connection.ts';
import { ExtensionError, errorView } from './errors.ts';

/** What the chat view shows, one event at a time, in order (the webview renders these). */
export type ChatEvent =
  | { type: 'session'; session: SessionInfo; recap: RecapTurn[] }
  | { type: 'user'; turnId: string; text: string }
  | { type: 'text'; turnId: string; artifactId: string; text: string; append: boolean }
  | { type: 'tool'; turnId: string; callId: string; tool: string; args: string; state: string; summary?: string }
  | { type: 'approval'; turnId: string; taskId: string; question: string; tool: string; args: string; preview?: string }
  | { type: 'state'; turnId: string; state: string; text?: string }
  | { type: 'usage'; turnId: string; text: string }
  | { type: 'error'; turnId?: string; message: string; hint?: string }
  | { type: 'busy'; busy: boolean };

export interface SessionInfo {
  id: string;
  actor: string;
  title?: string;
  project?: string;
}

export interface RecapTurn {
  asked: string;
  answer: string;
}

export interface NewSessionOptions {
  actor?: string;
  project?: string;
  title?: string;
}

/** How many of a resumed session's last turns the view shows first. */
const RECAP_TURNS = 5;

const STATE_WORDS: Record<TaskState, string> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_INPUT_REQUIRED: 'waiting for your answer',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'waiting for authentication',
};

const textOf = (parts: readonly Part[] | undefined): string => (parts ?? []).map((p) => p.text ?? '').join('');
const dataOf = (m: Message | undefined, key: string): Record<string, unknown> | undefined => {
  for (const p of m?.parts ?? []) {
    const v = p.data && typeof p.data === 'object' ? (p.data as Record<string, unknown>)[key] : undefined;
    if (v && typeof v === 'object') return v as Record<string, unknown>;
  }
  return undefined;
};

/** A tool call's arguments on one line, without bulky file contents. */
export function argsLine(args: unknown): string {
  if (typeof args === 'string') return args;
  if (!args || typeof args !== 'object') return '';
  const line = Object.entries(args as Record<string, unknown>)
    .filter(([k]) => k !== 'content')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/**
 * One chat in one session: the user's turns streamed to the view as {@link ChatEvent}s, tool calls
 * as they run, and an approval the turn waits for answered on the same task. One turn runs at a
 * time; a failure is an `error` event, never a throw to the view.
 */
export class ChatController {
  private session: Session | undefined;
  /** The task that waits for the user: its next message answers it. */
  private waiting: { taskId: string; approval: boolean } | undefined;
  private running: { taskId?: string; abort: AbortController } | undefined;

  private readonly conn: Connection;
  private readonly emit: (ev: ChatEvent) => void;

  constructor(conn: Connection, emit: (ev: ChatEvent) => void) {
    this.conn = conn;
    this.emit = emit;
  }

  get sessionId(): string | undefined {
    return this.session?.id;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Whether the session's last turn waits for an approval (the view shows its buttons). */
  get awaitingApproval(): boolean {
    return this.waiting?.approval === true;
  }

  /** The user's sessions, most recently active first (for a picker). */
  async sessions(): Promise<SessionInfo[]> {
    const r = await this.conn.with((c) => c.call(sessionList, { pageSize: 50 }));
    return r.sessions.map(info);
  }

  /** The actors a new session can talk to (for a picker): name and description. */
  async actors(): Promise<Array<{ name: string; description: string }>> {
    const r = await this.conn.with((c) => c.call(actorRegistry.list, { pageSize: 200 }));
    return r.items.map((a) => ({ name: a.name, description: a.definition.description ?? '' }));
  }

  /** A new session (the actor's default when none is named); the view starts empty. */
  async newSession(opts: NewSessionOptions = {}): Promise<boolean> {
    return this.guard(async () => {
      this.refuseWhileBusy();
      const session = await this.conn.with((c) =>
        c.call(sessionCreate, {
          ...(opts.actor ? { actor: opts.actor } : {}),
          ...(opts.project ? { project: opts.project } : {}),
          ...(opts.title ? { title: opts.title } : {}),
        }),
      );
      this.open(session, []);
    });
  }

  /** Go on with a session (the given one, or the most recently active) after a recap of its last turns. */
  async resume(sessionId?: string): Promise<boolean> {
    return this.guard(async () => {
      this.refuseWhileBusy();
      const r = await this.conn.with((c) =>
        c.call(sessionResume, { ...(sessionId ? { sessionId } : {}), turns: RECAP_TURNS }),
      );
      this.open(r.session, r.tasks);
    });
  }

  /**
   * One turn: the text goes to the session (a new one with the default actor if none is open),
   * or answers the task that waits for input. Resolves when the turn's stream ends.
   */
  async send(text: string): Promise<boolean> {
    const line = text.trim();
    if (line === '') return false;
    return this.guard(async () => {
      this.refuseWhileBusy();
      if (!this.session) this.open(await this.conn.with((c) => c.call(sessionCreate, {})), []);
      return this.turn([{ text: line }], line);
    });
  }

  /** Answers the approval the turn waits for: approve, or reject (with guidance: what to do instead). */
  async answer(decision: 'approve' | 'reject', guidance?: string): Promise<boolean> {
    return this.guard(async () => {
      this.refuseWhileBusy();
      if (!this.waiting?.approval)
        throw new ExtensionError('nothing waits for an approval', 'an approval is asked for when a tool needs one');
      const g = guidance?.trim();
      const approval = { decision, ...(decision === 'reject' && g ? { guidance: g } : {}) };
      const said = decision === 'approve' ? 'approve' : g ? `reject: ${g}` : 'reject';
      return this.turn([{ data: { approval }, mediaType: 'application/json' }], said);
    });
  }

  /** Cancels the running turn (CancelTask); its stream then ends canceled. */
  async cancel(): Promise<boolean> {
    const run = this.running;
    if (!run) return false;
    if (!run.taskId) {
      run.abort.abort();
      return true;
    }
    const taskId = run.taskId;
    return this.guard(async () => {
      await this.conn.with((c) => c.call(cancelTask, { id: taskId }));
    });
  }

  private open(session: Session, recap: readonly Task[]): void {
    this.session = session;
    const last = recap.at(-1);
    this.waiting =
      last?.status.state === 'TASK_STATE_INPUT_REQUIRED'
        ? { taskId: last.id, approval: dataOf(last.status.message, 'approvalRequest') !== undefined }
        : undefined;
    this.emit({ type: 'session', session: info(session), recap: recap.map(recapOf) });
    if (last && this.waiting) this.statusEvents(last.id, last.id, last.status);
  }

  private async turn(parts: Part[], shown: string): Promise<boolean> {
    const session = this.session;
    if (!session) return false;
    const turnId = randomUUID();
    const message: Message = {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      contextId: session.id,
      parts,
      ...(this.waiting ? { taskId: this.waiting.taskId } : {}),
    };
    const run: { taskId?: string; abort: AbortController } = { abort: new AbortController() };
    if (this.waiting) run.taskId = this.waiting.taskId;
    this.waiting = undefined;
    this.running = run;
    this.emit({ type: 'busy', busy: true });
    this.emit({ type: 'user', turnId, text: shown });
    let last: { taskId: string; state: TaskState; message?: Message } | undefined;
    try {
      const client = await this.conn.client();
      for await (const { event } of client.stream(sendStreamingMessage, { message }, { signal: run.abort.signal })) {
        const seen = this.onEvent(turnId, event);
        if (seen) {
          run.taskId = seen.taskId;
          last = seen;
        }
      }
    } catch (err) {
      // The turn's own failure (a refused message, a dead agent) is said under the turn.
      if (run.abort.signal.aborted) this.emit({ type: 'state', turnId, state: 'canceled' });
      else this.emit({ type: 'error', turnId, ...errorView(err) });
      return false;
    } finally {
      this.running = undefined;
      this.emit({ type: 'busy', busy: false });
    }
    if (last?.state === 'TASK_STATE_INPUT_REQUIRED')
      this.waiting = { taskId: last.taskId, approval: dataOf(last.message, 'approvalRequest') !== undefined };
    if (!last) this.emit({ type: 'error', turnId, message: 'the agent ended this turn without answering' });
    return last !== undefined;
  }

  /** One stream event as view events; returns the task's state when the event carries one. */
  private onEvent(
    turnId: string,
    ev: StreamResponse,
  ): { taskId: string; state: TaskState; message?: Message } | undefined {
    if ('task' in ev) {
      for (const a of ev.task.artifacts ?? []) this.artifactEvent(turnId, a, false);
      this.statusEvents(turnId, ev.task.id, ev.task.status);
      return stateOf(ev.task.id, ev.task.status);
    }
    if ('message' in ev) {
      this.emit({
        type: 'text',
        turnId,
        artifactId: ev.message.messageId,
        text: textOf(ev.message.parts),
        append: false,
      });
      return undefined;
    }
    if ('artifactUpdate' in ev) {
      this.artifactEvent(turnId, ev.artifactUpdate.artifact, ev.artifactUpdate.append === true);
      return undefined;
    }
    const { status, taskId, metadata } = ev.statusUpdate;
    this.statusEvents(turnId, taskId, status);
    const usage = metadata?.['usage'];
    if (usage && typeof usage === 'object') this.emit({ type: 'usage', turnId, text: usageLine(usage) });
    return stateOf(taskId, status);
  }

  private artifactEvent(turnId: string, a: Artifact, append: boolean): void {
    if (a.name === 'tool-call') {
      const d = a.parts[0]?.data as
        { tool?: unknown; callId?: unknown; arguments?: unknown; state?: unknown; summary?: unknown } | undefined;
      if (!d || typeof d.tool !== 'string') return;
      this.emit({
        type: 'tool',
        turnId,
        callId: typeof d.callId === 'string' ? d.callId : a.artifactId,
        tool: d.tool,
        args: argsLine(d.arguments),
        state: typeof d.state === 'string' ? d.state : 'running',
        ...(typeof d.summary === 'string' ? { summary: d.summary } : {}),
      });
      return;
    }
    const text = textOf(a.parts);
    if (text !== '' || !append) this.emit({ type: 'text', turnId, artifactId: a.artifactId, text, append });
  }

  private statusEvents(turnId: string, taskId: string, status: Task['status']): void {
    const text = textOf(status.message?.parts);
    const ask = dataOf(status.message, 'approvalRequest');
    if (status.state === 'TASK_STATE_INPUT_REQUIRED' && ask) {
      this.emit({
        type: 'approval',
        turnId,
        taskId,
        question: text || `Allow ${String(ask['tool'])}?`,
        tool: typeof ask['tool'] === 'string' ? ask['tool'] : 'a tool',
        args: argsLine(ask['args']),
        ...(typeof ask['preview'] === 'string' ? { preview: ask['preview'] } : {}),
      });
      return;
    }
    const failure = dataOf(status.message, 'error');
    if (status.state === 'TASK_STATE_FAILED' && failure) {
      const hint = typeof failure['hint'] === 'string' ? failure['hint'] : undefined;
      const message = typeof failure['message'] === 'string' ? failure['message'] : text || 'the turn failed';
      this.emit({ type: 'error', turnId, message, ...(hint ? { hint } : {}) });
      return;
    }
    // Working updates without words are noise in a chat; every other state is said once.
    if (status.state === 'TASK_STATE_WORKING' && text === '') return;
    if (status.state === 'TASK_STATE_SUBMITTED') return;
    this.emit({ type: 'state', turnId, state: STATE_WORDS[status.state], ...(text ? { text } : {}) });
  }

  private refuseWhileBusy(): void {
    if (this.running)
      throw new ExtensionError('a turn is still running', 'wait for its answer, or cancel it (CleverAgents: Cancel)');
  }

  /** Runs an operation; a failure becomes an `error` event (false), so the view never sees a throw. */
  private async guard(fn: () => Promise<boolean | void>): Promise<boolean> {
    try {
      return (await fn()) !== false;
    } catch (err) {
      this.emit({ type: 'error', ...errorView(err) });
      return false;
    }
  }
}

function info(s: Session): SessionInfo {
  return {
    id: s.id,
    actor: s.actor,
    ...(s.title ? { title: s.title } : {}),
    ...(s.project ? { project: s.project } : {}),
  };
}

function stateOf(taskId: string, status: Task['status']): { taskId: string; state: TaskState; message?: Message } {
  return { taskId, state: status.state, ...(status.message ? { message: status.message } : {}) };
}

function recapOf(t: Task): RecapTurn {
  const asked = textOf(t.history?.find((m) => m.role === 'ROLE_USER')?.parts);
  const answer =
    (t.artifacts ?? [])
      .filter((a) => a.name !== 'tool-call')
      .map((a) => textOf(a.parts))
      .join('\n') ||
    textOf(t.status.message?.parts) ||
    `(${STATE_WORDS[t.status.state]})`;
  return { asked, answer };
}

function usageLine(u: object): string {
  const x = u as {
    model?: unknown;
    inputTokens?: unknown;
    outputTokens?: unknown;
    cost?: { amount?: unknown; currency?: unknown };
  };
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const tokens = `${n(x.inputTokens)} in · ${n(x.outputTokens)} out`;
  const currency = typeof x.cost?.currency === 'string' ? ` ${x.cost.currency}` : '';
  const cost = typeof x.cost?.amount === 'number' ? ` · ${x.cost.amount.toFixed(4)}${currency}` : '';
  return `${typeof x.model === 'string' ? `${x.model} · ` : ''}${tokens} tokens${cost}`;
}

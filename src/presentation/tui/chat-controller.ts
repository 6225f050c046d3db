import {
  sendStreamingMessage,
  sessionCreate,
  sessionDelete,
  sessionList,
  sessionResume,
  type A2AClient,
  type Message,
  type Task,
} from '../../protocol/client/index.ts';
import { qualify } from '../cli/render/definition.render.ts';
import { foldEvent, isInterruptedState, isTerminalState, messageWords } from '../cli/render/task.render.ts';
import { userMessage } from '../cli/support/message.ts';
import { approvalRequestOf, type ApprovalAnswer } from '../../protocol/client/index.ts';
import { TurnCancel } from '../cli/support/turn-cancel.ts';
import { resolveMentions } from '../cli/chat/mentions.ts';
import type { Guard } from './guard.ts';
import type { SlashCommand } from './slash.ts';
import type { Store } from './store.ts';

/** How many of a session's last turns are shown when it is opened. */
const RECAP_TURNS = 10;

/** The sessions list and the chat: every call they make, and the streamed turns folded into the store. */
export class ChatController {
  /** The turn that streams, and its cancel. */
  private turn: TurnCancel | undefined;
  /** A task that waits for input without an approval request: the next line answers it. */
  private waitingTask: string | undefined;
  private seq = 0;

  private readonly client: A2AClient;
  private readonly store: Store;
  private readonly guard: Guard;

  /** Where `@path` mentions are read from: the directory the TUI was started in. */
  private readonly cwd: string;

  constructor(client: A2AClient, store: Store, guard: Guard, cwd: string) {
    this.client = client;
    this.store = store;
    this.guard = guard;
    this.cwd = cwd;
  }

  loadSessions(): Promise<void> {
    return this.guard.run('sessions', async () => {
      const r = await this.client.call(sessionList, { pageSize: 100 });
      this.store.dispatch({ type: 'sessions', sessions: r.sessions });
    });
  }

  openSession(sessionId: string): Promise<void> {
    return this.guard.run('session', async () => {
      const r = await this.client.call(sessionResume, { sessionId, turns: RECAP_TURNS });
      this.store.dispatch({ type: 'open-session', session: r.session, recap: r.tasks });
      this.noteWaiting(r.tasks.at(-1));
    });
  }

  newSession(cmd: Extract<SlashCommand, { name: 'new' }> | { name: 'new'; skills: string[] }): Promise<void> {
    return this.guard.run('new session', async () => {
      const c = cmd as { actor?: string; project?: string; skills: string[]; title?: string };
      const session = await this.client.call(sessionCreate, {
        ...(c.actor ? { actor: qualify(c.actor) } : {}),
        ...(c.project ? { project: qualify(c.project) } : {}),
        ...(c.skills.length ? { skills: c.skills.map(qualify) } : {}),
        ...(c.title ? { title: c.title } : {}),
      });
      this.waitingTask = undefined;
      this.store.dispatch({ type: 'open-session', session, recap: [] });
      this.guard.info(`new session ${session.id} with ${session.actor}`);
    });
  }

  /** `/clear`: a new session with the open one's actor, project, skills and context; the old one stays as it was. */
  clear(): Promise<void> {
    return this.guard.run('clear', async () => {
      const from = this.store.get().session;
      if (!from) return this.guard.info('no session open: /new starts one');
      const { actor, project, skills, context } = from;
      const session = await this.client.call(sessionCreate, {
        actor,
        ...(project !== undefined ? { project } : {}),
        ...(skills && skills.length > 0 ? { skills } : {}),
        ...(context !== undefined ? { context } : {}),
      });
      this.waitingTask = undefined;
      this.store.dispatch({ type: 'open-session', session, recap: [] });
      this.guard.info(
        `new session ${session.id} with ${session.actor} (session ${from.id} is kept: /session ${from.id})`,
      );
    });
  }

  deleteSession(session: { id: string }): Promise<void> {
    return this.guard.run('delete', async () => {
      const r = await this.client.call(sessionDelete, { sessionId: session.id });
      this.store.dispatch({ type: 'confirm-delete', session: undefined });
      this.guard.info(`deleted session ${session.id} (${r.tasksDeleted} turns)`);
      if (this.store.get().session?.id === session.id) this.store.dispatch({ type: 'view', view: 'sessions' });
      await this.loadSessions();
    });
  }

  /** A line typed in the chat: a new turn, or the answer to the task that waits. */
  async send(text: string): Promise<void> {
    const s = this.store.get();
    if (s.streaming) return this.guard.info('a turn is still streaming: Esc or Ctrl-C cancels it');
    // A typed answer to an approval goes as text: the agent reads yes / no / guidance as it does from every client.
    if (s.approval) return this.answer(text);
    let session = s.session;
    if (!session) {
      await this.newSession({ name: 'new', skills: [] });
      session = this.store.get().session;
      if (!session) return;
    }
    // As in `agents chat`: a mention that cannot be read refuses the line, and nothing is sent.
    const mentions = await resolveMentions(text, this.cwd);
    if (!mentions.ok) {
      this.store.dispatch({ type: 'input', text });
      this.store.dispatch({
        type: 'notice',
        notice: {
          level: 'error',
          report: {
            message: mentions.problems.join('; '),
            type: 'UsageError',
            hint: 'nothing was sent: fix the @path',
          },
        },
      });
      return;
    }
    const plain = userMessage(text, { contextId: session.id, taskId: this.waitingTask });
    const message = { ...plain, parts: [...plain.parts, ...mentions.parts] };
    const key = this.waitingTask ?? `turn-${++this.seq}`;
    if (!this.waitingTask) this.store.dispatch({ type: 'turn-start', turn: { key, input: text } });
    this.waitingTask = undefined;
    await this.stream(key, message, this.store.get().turns.find((t) => t.key === key)?.task);
  }

  /** Answers the approval the chat waits for, on its task; the turn goes on where it stopped. */
  async answer(answer: ApprovalAnswer | string): Promise<void> {
    const a = this.store.get().approval;
    if (!a) return this.guard.info('nothing waits for an approval');
    this.store.dispatch({ type: 'approval', approval: undefined });
    const ids = { contextId: a.contextId, taskId: a.taskId };
    const message: Message =
      typeof answer === 'string'
        ? userMessage(answer, ids)
        : { ...userMessage('', ids), parts: [{ data: { approval: answer } }] };
    const turn = this.store.get().turns.find((t) => t.task?.id === a.taskId);
    await this.stream(turn?.key ?? a.taskId, message, turn?.task);
  }

  /**
   * Esc / Ctrl-C during a turn: cancels its task on the agent (CancelTask; once the stream names
   * it, if it has not yet), so the agent and the model stop too, and waits (bounded) for the turn
   * to end canceled. A cancel the agent does not confirm is shown, and the chat stops waiting.
   */
  async cancelTurn(): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    await this.guard.run('cancel', async () => {
      const outcome = await turn.cancel();
      if (outcome.kind === 'unconfirmed') throw outcome.problem;
    });
  }

  private async stream(key: string, message: Message, start: Task | undefined): Promise<void> {
    const turn = (this.turn = new TurnCancel(this.client));
    if (start) turn.know(start.id);
    this.store.dispatch({ type: 'streaming', on: true });
    let task = start ? structuredClone(start) : undefined;
    try {
      for await (const { event } of this.client.stream(sendStreamingMessage, { message }, { signal: turn.signal })) {
        task = foldEvent(task, event);
        if (task) {
          turn.know(task.id);
          this.store.dispatch({ type: 'turn-update', key, task });
        }
      }
    } catch (err) {
      // Given up after a cancel: cancelTurn shows why.
      if (!turn.signal.aborted) this.guard.report(err);
    } finally {
      turn.ended();
      this.turn = undefined;
      this.store.dispatch({ type: 'streaming', on: false });
    }
    // Canceled, but the stream was given up before it brought the final state: the cancel's answer has it.
    const canceled = turn.outcome?.kind === 'canceled' ? turn.outcome.task : undefined;
    if (canceled && !isTerminalState(task?.status.state ?? '')) {
      task = canceled;
      this.store.dispatch({ type: 'turn-update', key, task });
    }
    this.noteWaiting(task);
  }

  /** A turn that stopped for the user: its approval prompt, or the next line as its answer. */
  private noteWaiting(task: Task | undefined): void {
    this.waitingTask = undefined;
    if (!task || !isInterruptedState(task.status.state)) return;
    const request = approvalRequestOf(task.status.message);
    if (request)
      this.store.dispatch({
        type: 'approval',
        approval: {
          taskId: task.id,
          contextId: task.contextId,
          request,
          question: messageWords(task.status.message) ?? `Allow ${request.tool ?? 'the tool call'}?`,
        },
      });
    else this.waitingTask = task.id;
  }
}

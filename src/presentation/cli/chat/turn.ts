/** One turn of `agents chat`: the message sent, the answer streamed, and how it ended. */
import {
  A2AClientError,
  approvalRequestOf,
  sendStreamingMessage,
  type A2AClient,
  type Part,
  type Task,
} from '../../../protocol/client/index.ts';
import { exitReasonOf } from '../exit-codes.ts';
import { renderError, reportOf, type ErrorReport } from '../render/error.render.ts';
import { MarkdownStream } from '../render/markdown.render.ts';
import { StreamPrinter, type StreamedEvent } from '../render/stream.render.ts';
import { isTerminalState } from '../render/task.render.ts';
import type { RunContext } from '../runner.ts';
import { userMessage } from '../support/message.ts';
import { reportCancel, reportFallback, reportTaskEnd, reportUsage } from '../support/task-outcome.ts';
import { TurnCancel } from '../support/turn-cancel.ts';
import { approvalQuestion } from './approval.ts';
import type { LiveTurn } from './input.ts';

/** What the answer follows on its first line. */
const AGENT_PROMPT = 'agent › ';

export interface ChatTurn {
  input: string;
  /** The files and folders its `@path` mentions added. */
  mentions?: string[];
  task: Task | null;
  events: StreamedEvent[];
  error?: ErrorReport;
}

/**
 * One turn: the line sent, the answer streamed, and how it ended (filled into `turn`); true when
 * it was canceled because the chat is being interrupted. `inPlace` (a terminal): a turn that stops
 * for an approval prints the question, for the chat's next line to answer.
 */
export async function chatTurn(
  ctx: RunContext,
  client: A2AClient,
  live: LiveTurn,
  turn: ChatTurn,
  to: { contextId: string; taskId: string | undefined },
  extra: readonly Part[] = [],
  inPlace = false,
): Promise<boolean> {
  const { ui } = ctx;
  if (ui.rich) ui.out(ui.pal.magenta(AGENT_PROMPT));
  // Markdown only for people at a terminal: a pipe and --plain get the text as the model wrote it.
  const width = ui.width;
  const printer = new StreamPrinter(
    ui,
    'answer',
    ui.rich && width !== undefined ? new MarkdownStream(ui.pal, width, { column: AGENT_PROMPT.length }) : undefined,
  );
  turn.events = printer.events;
  const cancel = (live.running = new TurnCancel(client));
  try {
    const typed = userMessage(turn.input, to);
    const message = { ...typed, parts: [...typed.parts, ...extra] };
    for await (const { seq, event } of client.stream(sendStreamingMessage, { message }, { signal: cancel.signal })) {
      printer.push(seq, event);
      if (printer.task) cancel.know(printer.task.id);
    }
  } catch (err) {
    // Given up after a cancel: said below. The agent refused this turn: say why and keep
    // chatting. Anything else ends the chat.
    if (!cancel.signal.aborted) {
      if (!(err instanceof A2AClientError)) throw err;
      const reason = exitReasonOf(err);
      turn.error = reportOf(err, reason, { kind: 'local' });
      printer.end();
      if (ui.human) ui.rawErr(renderError(turn.error, reason, { rich: ui.rich, pal: ui.errPal }));
    }
  } finally {
    live.running = undefined;
    cancel.ended();
    printer.end();
  }
  const canceled = cancel.requested ? await cancel.cancel() : undefined;
  const task = canceled?.kind === 'canceled' && !isEnded(printer.task) ? canceled.task : printer.task;
  if (printer.events.length === 0 && !turn.error && !canceled) ui.warn('the agent ended this turn without answering');
  turn.task = task ?? null;
  const asks = inPlace ? approvalRequestOf(task?.status.message) : undefined;
  if (task && asks && task.status.state === 'TASK_STATE_INPUT_REQUIRED') {
    // Asked here and answered on the next line: no "agents send --task" hint. Rich output has
    // shown the question with its diff in the status line already: asked once.
    reportUsage(ui, task);
    if (!ui.rich) ui.out(approvalQuestion(asks));
  } else if (task && task.status.state !== 'TASK_STATE_COMPLETED') reportTaskEnd(ui, task);
  else {
    reportUsage(ui, task);
    reportFallback(ui, task);
  }
  if (canceled) reportCancel(ui, canceled);
  return canceled !== undefined && ctx.signal.aborted;
}

const isEnded = (task: Task | undefined): boolean => task !== undefined && isTerminalState(task.status.state);

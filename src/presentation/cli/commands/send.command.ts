import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  sendMessage,
  sendStreamingMessage,
  type A2AClient,
  type Message,
  type ResultOf,
  type Task,
  cancelTask,
  getTask,
  sessionCreate,
  sessionShow,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { StreamPrinter } from '../render/stream.render.ts';
import { artifactsText, isTerminalState, messageText, renderTask } from '../render/task.render.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { eventLines, type EventLines } from '../support/events.ts';
import { userMessage } from '../support/message.ts';
import { collect, CONTEXT_FLAG, targetSession, type SessionChoice } from './session.command.ts';
import {
  approvalWaitError,
  taskFailureError,
  exitForTask,
  reportCancel,
  reportTaskEnd,
} from '../support/task-outcome.ts';
import { TurnCancel } from '../support/turn-cancel.ts';
import {
  CURRENT_PROJECT_CALLS,
  noDirectoryProject,
  projectLine,
  withSessionDefaults,
} from '../init/current-project.ts';
import { SESSION_REF_CALLS, SESSION_REF_HELP, taskIdOfRef } from '../support/refs.ts';

interface SendOptions extends SessionChoice {
  stream?: boolean;
  events?: boolean;
  task?: string;
  wait: boolean;
}

async function send(ctx: RunContext, text: string, opts: SendOptions): Promise<Outcome> {
  if (opts.stream && !opts.wait) throw new UsageError('--no-wait cannot be combined with --stream');
  if (opts.events && !opts.wait) throw new UsageError('--no-wait cannot be combined with --events');
  const lines = eventLines(ctx, opts.events);
  if (opts.task && (opts.session || opts.actor || opts.project || opts.skill?.length || opts.context))
    throw new UsageError(
      '--task continues an existing task: it cannot be combined with --session, --actor, --project, --skill or --context',
    );
  if (text === '-') text = await readAll(ctx.io.stdin);
  if (text.trim() === '') throw new UsageError('the message is empty');
  const client = await ctx.client();
  const chosen = await withSessionDefaults(ctx, client, opts);
  // Said when the command line did not name it: the session works on that project's files.
  if (chosen.project && chosen.project.source !== 'flag') ctx.ui.info(projectLine(chosen.project));
  else if (!chosen.project && opts.session === undefined && opts.task === undefined) {
    const note = noDirectoryProject(ctx);
    if (note) ctx.ui.warn(note);
  }
  const session = await targetSession(ctx, client, chosen.opts);
  // The full task id, as for the session: a prefix or `last` resolved by GetTask, not by routing.
  const taskId = opts.task === undefined ? undefined : await taskIdOfRef(ctx, client, opts.task);
  const message = userMessage(text, { contextId: session?.id, taskId });
  // --events streams too: each event is a line as it arrives.
  const streamed = opts.stream === true || lines !== undefined;
  const turn = new TurnCancel(
    client,
    // A blocking send names its task only when it returns: the same message sent again with
    // returnImmediately is a retry (same messageId), answered at once with the task it started.
    streamed ? {} : { findTask: (signal) => taskOfMessage(client, message, signal) },
  );
  // Ctrl-C cancels the turn on the agent and waits for it, bounded; a second Ctrl-C exits at once (the Runner).
  ctx.signal.throwIfAborted();
  const onInterrupt = (): void => void turn.cancel();
  ctx.signal.addEventListener('abort', onInterrupt, { once: true });
  try {
    return streamed
      ? await sendStreamed(ctx, client, message, turn, lines)
      : await sendWaiting(ctx, client, message, turn, opts);
  } finally {
    ctx.signal.removeEventListener('abort', onInterrupt);
  }
}

async function sendStreamed(
  ctx: RunContext,
  client: A2AClient,
  message: Message,
  turn: TurnCancel,
  lines: EventLines | undefined,
): Promise<Outcome> {
  const { ui } = ctx;
  const printer = new StreamPrinter(ui, 'answer');
  try {
    for await (const { seq, event } of client.stream(sendStreamingMessage, { message }, { signal: turn.signal })) {
      printer.push(seq, event);
      lines?.event(seq, event);
      if (printer.task) turn.know(printer.task.id);
    }
  } catch (err) {
    // Given up after a cancel (its outcome says why, below); anything else is the command's failure.
    if (!turn.signal.aborted) throw err;
  } finally {
    turn.ended();
    printer.end();
  }
  const canceled = turn.requested ? await turn.cancel() : undefined;
  if (printer.events.length === 0 && !canceled) throw new Error('the agent ended the stream without sending anything');
  const task = canceled?.kind === 'canceled' && !isTerminalTask(printer.task) ? canceled.task : printer.task;
  // A failed task ends as plain send's does: the agent's words and hint as the error (exit 9).
  const failed = canceled ? undefined : taskFailureError(task);
  if (!failed) reportTaskEnd(ui, task);
  if (canceled) reportCancel(ui, canceled);
  const data: Record<string, unknown> = { task: task ?? null, events: printer.events };
  if (printer.message) data['message'] = printer.message;
  if (failed) return { data, error: failed };
  const waiting = canceled ? undefined : approvalWaitError(task, ctx.io.stdin.isTTY === true);
  if (waiting) return { data, error: waiting };
  return { data, exit: canceled ? 'INTERRUPTED' : exitForTask(task) };
}

async function sendWaiting(
  ctx: RunContext,
  client: A2AClient,
  message: Message,
  turn: TurnCancel,
  opts: SendOptions,
): Promise<Outcome> {
  const { ui } = ctx;
  let result: ResultOf<typeof sendMessage> | undefined;
  try {
    result = await client.call(
      sendMessage,
      { message, ...(opts.wait ? {} : { configuration: { returnImmediately: true } }) },
      { signal: turn.signal },
    );
  } catch (err) {
    if (!turn.signal.aborted) throw err;
  } finally {
    turn.ended();
  }
  const canceled = turn.requested ? await turn.cancel() : undefined;
  if (result && 'message' in result) {
    ui.out(`${messageText(result.message) ?? ''}\n`);
    return { data: result, ...(canceled ? { exit: 'INTERRUPTED' as const } : {}) };
  }
  // Given up waiting after a cancel: the task as the cancel left it, if the agent answered that.
  const task = result?.task ?? (canceled?.kind === 'canceled' ? canceled.task : undefined);
  const answer = artifactsText(task?.artifacts);
  const failed = canceled ? undefined : taskFailureError(task);
  if (task && answer && (opts.wait || canceled)) {
    ui.out(answer.endsWith('\n') ? answer : `${answer}\n`);
    if (!failed) reportTaskEnd(ui, task);
  } else if (task && !failed) {
    ui.out(renderTask(task, ui.mode));
  }
  if (canceled) reportCancel(ui, canceled);
  const data = result ?? { task: task ?? null };
  if (failed) return { data, error: failed };
  const waiting = canceled || !opts.wait ? undefined : approvalWaitError(task, ctx.io.stdin.isTTY === true);
  if (waiting) return { data, error: waiting };
  return { data, exit: canceled ? 'INTERRUPTED' : exitForTask(task) };
}

/** The task a message started (or continues): a retry of the send, answered without waiting. */
async function taskOfMessage(client: A2AClient, message: Message, signal: AbortSignal): Promise<string | undefined> {
  const r = await client.call(sendMessage, { message, configuration: { returnImmediately: true } }, { signal });
  return 'task' in r ? r.task.id : undefined;
}

const isTerminalTask = (task: Task | undefined): boolean => task !== undefined && isTerminalState(task.status.state);

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8').replace(/\n$/, '');
}

export function registerSend(program: CliCommand, runner: Runner): void {
  program
    .command('send')
    .description('Send a message to the agent and print its answer (use - to read the message from stdin)')
    .argument('<text...>', 'the message')
    .option('--stream', 'print the answer as it is produced (SendStreamingMessage)')
    .option('--events', 'with --format json: one JSON line per event as it happens, then the result line')
    .option('--session <id>', `send into this session: ${SESSION_REF_HELP}; with --project, that project's`)
    .option(
      '--actor <name>',
      'start a new session with this actor (default: config defaultActor, else the agent default)',
    )
    .option(
      '--project <name>',
      "start a new session whose tools work on this project's files (default: the project of the current directory in local mode, else config defaultProject); with --session last, the project whose newest session is meant",
    )
    .option('--skill <name>', 'start a new session with this skill added to the actor (repeatable)', collect)
    .option(CONTEXT_FLAG.flags, CONTEXT_FLAG.description, CONTEXT_FLAG.parse)
    .option(
      '--task <id>',
      'answer a task that waits for input (continues it): its id, a unique prefix, or `last` (your most recently updated task)',
    )
    .option('--no-wait', 'return as soon as the agent accepted the task')
    // Ctrl-C cancels the running turn (CancelTask) before the command ends.
    .calls(
      sendMessage,
      sendStreamingMessage,
      sessionCreate,
      sessionShow,
      cancelTask,
      getTask,
      ...SESSION_REF_CALLS,
      ...CURRENT_PROJECT_CALLS,
    )
    .action((words: string[], opts: SendOptions, cmd: Command) =>
      runner.run(cmd, 'send', (ctx) => send(ctx, words.join(' '), opts)),
    );
}

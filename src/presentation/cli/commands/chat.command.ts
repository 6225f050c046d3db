import { createInterface, type Interface } from 'node:readline';
import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  A2AClientError,
  sendStreamingMessage,
  sessionCreate,
  sessionResume,
  sessionUndo,
  type A2AClient,
  type Session,
  type Task,
  type UndoOutcome,
  cancelTask,
  sessionShow,
} from '../../../protocol/client/index.ts';
import { exitReasonOf } from '../exit-codes.ts';
import { renderError, reportOf, type ErrorReport } from '../render/error.render.ts';
import { StreamPrinter, type StreamedEvent } from '../render/stream.render.ts';
import { compactionLine, compactionOf } from '../render/compaction.render.ts';
import { oneLine } from '../render/table.ts';
import {
  artifactsText,
  isInterruptedState,
  isTerminalState,
  messageWords,
  partsText,
  stateWord,
} from '../render/task.render.ts';
import type { Ui } from '../render/ui.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { userMessage } from '../support/message.ts';
import { reportCancel, reportFallback, reportTaskEnd, reportUsage } from '../support/task-outcome.ts';
import { TurnCancel } from '../support/turn-cancel.ts';
import { collect, CONTEXT_FLAG, freshSession, targetSession, type SessionChoice } from './session.command.ts';
import { CURRENT_PROJECT_CALLS, projectLine, withSessionDefaults } from '../init/current-project.ts';
import { parseUndoArgs, undoText } from '../render/undo.render.ts';

interface ChatOptions extends SessionChoice {
  resume?: boolean;
}

/** How many of a continued session's last turns the recap shows. */
const RECAP_TURNS = 3;

interface ChatTurn {
  input: string;
  task: Task | null;
  events: StreamedEvent[];
  error?: ErrorReport;
}

/** A `/undo` typed in the chat: what it put back, or why it was refused. */
interface ChatUndo {
  input: string;
  outcome?: UndoOutcome;
  error?: ErrorReport | string;
}

/** The turn that runs, if one does: Ctrl-C and Esc cancel it and the chat goes on. */
interface LiveTurn {
  running?: TurnCancel | undefined;
}

/**
 * The chat's lines: a readline on stdin (a terminal or a pipe), with Ctrl-C, Esc and an outside
 * abort wired to the running turn; `close` undoes the wiring.
 */
function chatInput(ctx: RunContext, live: LiveTurn): { rl: Interface; interactive: boolean; close: () => void } {
  const { ui } = ctx;
  const interactive = ctx.io.stdin.isTTY === true && ui.human;
  const rl = createInterface({
    input: ctx.io.stdin,
    terminal: interactive,
    ...(interactive ? { output: ctx.io.stdout } : {}),
  });
  rl.setPrompt(ui.pal.bold('you › '));
  rl.on('SIGINT', () => {
    // A second Ctrl-C while the cancel is awaited: leave at once (onAbort stops waiting).
    if (live.running?.requested) return ctx.interrupt();
    if (live.running) return void live.running.cancel();
    // Text on the line: Ctrl-C drops it, as a shell does; at an empty prompt it leaves.
    if (rl.line !== '') {
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
      return;
    }
    ctx.interrupt();
  });
  const onKey = (_s: string | undefined, key: { name?: string } | undefined): void => {
    if (key?.name === 'escape' && live.running && !live.running.requested) void live.running.cancel();
  };
  // readline reads keys on a terminal; Esc is no line editing key of its own.
  if (interactive) ctx.io.stdin.on('keypress', onKey);
  // Ctrl-C from outside (a pipe's SIGINT, or the second Ctrl-C above): the running turn is
  // canceled (or, when that is already awaited, given up) and the chat ends.
  const onAbort = (): void => {
    if (live.running?.requested) live.running.abandon();
    else void live.running?.cancel();
    rl.close();
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const close = (): void => {
    ctx.signal.removeEventListener('abort', onAbort);
    ctx.io.stdin.off('keypress', onKey);
    rl.close();
  };
  return { rl, interactive, close };
}

/**
 * An interactive, streamed conversation in one session: one line in, the answer streamed out.
 * Works with piped stdin too (each line is a turn). `/exit` or end of input leaves.
 */
async function chat(ctx: RunContext, opts: ChatOptions): Promise<Outcome> {
  const { ui } = ctx;
  freshSession(opts, '--resume');
  freshSession(opts, '--session');
  const client = await ctx.client();
  const { session, recap } = await openSession(ctx, client, opts);
  if (ui.rich)
    ui.out(
      `${ui.pal.bold('Session')} ${session.id} ${ui.pal.dim(`· ${session.actor} · Esc or Ctrl-C cancels a turn · /exit or Ctrl-D to leave`)}\n`,
    );
  else ui.out(`session: ${session.id}\n`);
  printRecap(ui, session, recap);

  const live: LiveTurn = {};
  const input = chatInput(ctx, live);
  const { rl, interactive } = input;
  const turns: ChatTurn[] = [];
  const undos: ChatUndo[] = [];
  let interrupted = false;
  // A task that asked for input gets the next line as its answer (multi-turn, DESIGN.md §3.6).
  // A continued session whose last turn waits for input: the first line answers it.
  const lastTurn = recap.at(-1);
  let waitingTask = lastTurn && isInterruptedState(lastTurn.status.state) ? lastTurn.id : undefined;
  try {
    if (interactive) rl.prompt();
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === '/exit' || line === '/quit') break;
      if (line === '') {
        if (interactive) rl.prompt();
        continue;
      }
      if (/^\/undo(\s|$)/.test(line)) {
        undos.push(await undo(ctx, client, session.id, line));
        if (interactive) rl.prompt();
        continue;
      }
      if (!interactive) ui.out(ui.rich ? `${ui.pal.bold('you ›')} ${line}\n` : `> ${line}\n`);
      const turn: ChatTurn = { input: line, task: null, events: [] };
      turns.push(turn);
      const canceledOnTheWayOut = await chatTurn(ctx, client, live, turn, {
        contextId: session.id,
        taskId: waitingTask,
      });
      interrupted ||= canceledOnTheWayOut;
      waitingTask = turn.task && isInterruptedState(turn.task.status.state) ? turn.task.id : undefined;
      if (interactive && !ctx.signal.aborted) rl.prompt();
    }
  } finally {
    input.close();
  }
  if (interactive) ui.out('\n');
  // A turn canceled on the way out said so ("canceled"): no "interrupted" line after it.
  return {
    data: { session, recap, turns, ...(undos.length > 0 ? { undos } : {}) },
    ...(interrupted ? { exit: 'INTERRUPTED' as const } : {}),
  };
}

/**
 * One turn: the line sent, the answer streamed, and how it ended (filled into `turn`); true when
 * it was canceled because the chat is being interrupted.
 */
async function chatTurn(
  ctx: RunContext,
  client: A2AClient,
  live: LiveTurn,
  turn: ChatTurn,
  to: { contextId: string; taskId: string | undefined },
): Promise<boolean> {
  const { ui } = ctx;
  if (ui.rich) ui.out(ui.pal.magenta('agent › '));
  const printer = new StreamPrinter(ui, 'answer');
  turn.events = printer.events;
  const cancel = (live.running = new TurnCancel(client));
  try {
    const message = userMessage(turn.input, to);
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
  if (task && task.status.state !== 'TASK_STATE_COMPLETED') reportTaskEnd(ui, task);
  else {
    reportUsage(ui, task);
    reportFallback(ui, task);
  }
  if (canceled) reportCancel(ui, canceled);
  return canceled !== undefined && ctx.signal.aborted;
}

/** `/undo [turn] [--force]`: as `agents session undo` on this session; a refusal is said and the chat goes on. */
async function undo(ctx: RunContext, client: A2AClient, sessionId: string, line: string): Promise<ChatUndo> {
  const { ui } = ctx;
  const args = parseUndoArgs(line.split(/\s+/).slice(1));
  if (typeof args === 'string') {
    ui.warn(args);
    return { input: line, error: args };
  }
  try {
    const outcome = await client.call(
      sessionUndo,
      { sessionId, ...(args.turn !== undefined ? { turn: args.turn } : {}), ...(args.force ? { force: true } : {}) },
      { signal: ctx.signal },
    );
    ui.out(undoText(outcome, ui.rich, ui.pal));
    return { input: line, outcome };
  } catch (err) {
    if (!(err instanceof A2AClientError) || ctx.signal.aborted) throw err;
    const reason = exitReasonOf(err);
    const error = reportOf(err, reason, { kind: 'local' });
    if (ui.human) ui.rawErr(renderError(error, reason, { rich: ui.rich, pal: ui.errPal }));
    return { input: line, error };
  }
}

/** --resume (the last active session) or --session ID with its last turns; else the session to start. */
async function openSession(
  ctx: RunContext,
  client: A2AClient,
  opts: ChatOptions,
): Promise<{ session: Session; recap: Task[] }> {
  if (opts.resume === true || opts.session !== undefined) {
    const r = await client.call(
      sessionResume,
      { ...(opts.session !== undefined ? { sessionId: opts.session } : {}), turns: RECAP_TURNS },
      { signal: ctx.signal },
    );
    return { session: r.session, recap: r.tasks };
  }
  const chosen = await withSessionDefaults(ctx, client, opts);
  const session =
    (await targetSession(client, chosen.opts, ctx.signal)) ??
    (await client.call(sessionCreate, {}, { signal: ctx.signal }));
  if (chosen.project) ctx.ui.info(projectLine(chosen.project));
  return { session, recap: [] };
}

/** The last turns of a continued session, shortly: what was asked and answered. */
function printRecap(ui: Ui, session: Session, recap: readonly Task[]): void {
  if (recap.length === 0) return;
  const shown =
    recap.length < session.taskCount ? `last ${recap.length} of ${session.taskCount} turns` : 'turns so far';
  if (ui.rich) ui.out(`${ui.pal.dim(`${shown}:`)}\n`);
  for (const t of recap) {
    const compaction = compactionOf(t);
    if (compaction) {
      // A compaction is no exchange: it says what it summarised.
      if (ui.rich) ui.out(ui.pal.dim(`  ${compactionLine(compaction)}\n`));
      else ui.out(`recap\t${t.id}\tcompaction\t\t${clip(compactionLine(compaction))}\n`);
      continue;
    }
    const asked = clip(partsText(t.history?.find((m) => m.role === 'ROLE_USER')?.parts ?? []));
    const answer = clip(
      artifactsText(t.artifacts) || messageWords(t.status.message) || `(${stateWord(t.status.state)})`,
    );
    if (ui.rich) ui.out(ui.pal.dim(`  you › ${asked}\n  agent › ${answer}\n`));
    else ui.out(`recap\t${t.id}\t${stateWord(t.status.state)}\t${asked}\t${answer}\n`);
  }
}

const isEnded = (task: Task | undefined): boolean => task !== undefined && isTerminalState(task.status.state);

const clip = (text: string): string => {
  const line = oneLine(text);
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
};

export function registerChat(program: CliCommand, runner: Runner): void {
  program
    .command('chat')
    .description(
      'Talk with the agent, answers streamed; reads lines from stdin (a terminal or a pipe); /exit or EOF ends',
    )
    .option('--session <id>', 'continue this session (its last turns are shown first)')
    .option('--resume', 'continue your most recently active session (its last turns are shown first)')
    .option('--actor <name>', 'start a new session with this actor')
    .option('--project <name>', "start a new session whose tools work on this project's files")
    .option('--skill <name>', 'start a new session with this skill added to the actor (repeatable)', collect)
    .option(CONTEXT_FLAG.flags, CONTEXT_FLAG.description, CONTEXT_FLAG.parse)
    .calls(
      sendStreamingMessage,
      sessionCreate,
      sessionShow,
      sessionResume,
      sessionUndo,
      cancelTask,
      ...CURRENT_PROJECT_CALLS,
    )
    .action((opts: ChatOptions, cmd: Command) => runner.run(cmd, 'chat', (ctx) => chat(ctx, opts)));
}

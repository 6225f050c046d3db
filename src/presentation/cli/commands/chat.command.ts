import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  approvalRequestOf,
  cancelTask,
  sendStreamingMessage,
  sessionCreate,
  sessionResume,
  type A2AClient,
  type Session,
  type Task,
} from '../../../protocol/client/index.ts';
import { isInterruptedState } from '../render/task.render.ts';
import type { Ui } from '../render/ui.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { collect, CONTEXT_FLAG, freshSession, targetSession, type SessionChoice } from './session.command.ts';
import {
  CURRENT_PROJECT_CALLS,
  noDirectoryProject,
  projectLine,
  withSessionDefaults,
} from '../init/current-project.ts';
import { LAST, sessionRef, SESSION_REF_CALLS, SESSION_REF_HELP } from '../support/refs.ts';
import { APPROVAL_PROMPT } from '../chat/approval.ts';
import { chatInput, type LiveTurn } from '../chat/input.ts';
import { resolveMentions } from '../chat/mentions.ts';
import { printRecap, RECAP_TURNS } from '../chat/recap.ts';
import { parseChatLine, SlashDispatcher } from '../chat/slash.ts';
import { CHAT_CALLS } from '../chat/chat-calls.ts';
import { chatTurn, type ChatTurn } from '../chat/turn.ts';

interface ChatOptions extends SessionChoice {
  resume?: boolean;
}

/** A slash command typed in the chat and what it recorded (`--format json`: undos, compactions, …). */
interface ChatCommand {
  input: string;
  command: string;
  data?: unknown;
}

/** The line that opens a chat (and a `/clear`'s new session). */
function header(ui: Ui, session: Session): void {
  if (ui.rich)
    ui.out(
      // Two lines: as one, it wrapped mid-word on an 80-column terminal.
      `${ui.pal.bold('Session')} ${session.id} ${ui.pal.dim(`· ${session.actor}`)}\n${ui.pal.dim('/help lists commands · Esc or Ctrl-C cancels a turn · /exit or Ctrl-D to leave')}\n`,
    );
  else ui.out(`session: ${session.id}\n`);
}

/**
 * An interactive, streamed conversation in one session: one message in, the answer streamed out.
 * Works with piped stdin too (each line is a turn). `/exit` or end of input leaves.
 */
async function chat(ctx: RunContext, opts: ChatOptions): Promise<Outcome> {
  const { ui } = ctx;
  freshSession(opts, '--resume');
  freshSession(opts, '--session');
  const client = await ctx.client();
  const opened = await openSession(ctx, client, opts);
  let session = opened.session;
  const { recap } = opened;
  header(ui, session);
  printRecap(ui, session, recap);

  const slash = new SlashDispatcher();
  const live: LiveTurn = {};
  const input = chatInput(ctx, live, (line) => slash.complete(line));
  const { interactive } = input;
  const turns: ChatTurn[] = [];
  const commands: ChatCommand[] = [];
  const sessions: Session[] = [];
  let interrupted = false;
  // A task that asked for input gets the next line as its answer (multi-turn, DESIGN.md §3.6).
  // A continued session whose last turn waits for input: the first line answers it.
  const lastTurn = recap.at(-1);
  let waitingTask = lastTurn && isInterruptedState(lastTurn.status.state) ? lastTurn.id : undefined;
  let ask: string | undefined;
  try {
    input.prompt();
    for await (const line of input.messages()) {
      if (line === '') {
        input.prompt(ask);
        continue;
      }
      const parsed = parseChatLine(line);
      if (parsed.kind === 'slash') {
        const done = await slash.dispatch({ ctx, client, session }, parsed.name, parsed.args);
        if (done.kind === 'exit') break;
        if (done.kind === 'unknown') {
          ui.warn(SlashDispatcher.unknownText(done));
          commands.push({ input: line, command: done.name, data: { error: SlashDispatcher.unknownText(done) } });
        } else {
          commands.push({
            input: line,
            command: done.name,
            ...(done.result.data !== undefined ? { data: done.result.data } : {}),
          });
          if (done.result.session && done.result.session.id !== session.id) {
            // A new session (/clear): its header again, and nothing of the old one waits.
            sessions.push(session);
            waitingTask = undefined;
            ask = undefined;
            header(ui, done.result.session);
          }
          if (done.result.session) session = done.result.session;
        }
        input.prompt(ask);
        continue;
      }
      const text = parsed.text;
      const mentions = await resolveMentions(text, process.cwd());
      if (!mentions.ok) {
        // Nothing is sent: the line is in the history to fix and send again.
        for (const p of mentions.problems) ui.warn(p);
        commands.push({ input: line, command: '@', data: { error: mentions.problems } });
        input.prompt(ask);
        continue;
      }
      if (!interactive) ui.out(ui.rich ? `${ui.pal.bold('you ›')} ${line}\n` : `> ${line}\n`);
      const turn: ChatTurn = {
        input: text,
        task: null,
        events: [],
        ...(mentions.paths.length > 0 ? { mentions: mentions.paths } : {}),
      };
      turns.push(turn);
      const canceledOnTheWayOut = await chatTurn(
        ctx,
        client,
        live,
        turn,
        { contextId: session.id, taskId: waitingTask },
        mentions.parts,
        interactive,
      );
      interrupted ||= canceledOnTheWayOut;
      const waits = turn.task && isInterruptedState(turn.task.status.state) ? turn.task : undefined;
      waitingTask = waits?.id;
      ask = interactive && approvalAsked(waits) ? ui.pal.yellow(APPROVAL_PROMPT) : undefined;
      if (!ctx.signal.aborted) input.prompt(ask);
    }
  } finally {
    input.close();
  }
  if (interactive) ui.out('\n');
  const undos = commands.filter((c) => c.command === 'undo');
  // A turn canceled on the way out said so ("canceled"): no "interrupted" line after it.
  return {
    data: {
      session,
      recap,
      turns,
      ...(undos.length > 0 ? { undos: undos.map((u) => ({ input: u.input, ...(u.data as object) })) } : {}),
      ...(commands.length > 0 ? { commands } : {}),
      ...(sessions.length > 0 ? { earlierSessions: sessions.map((s) => s.id) } : {}),
    },
    ...(interrupted ? { exit: 'INTERRUPTED' as const } : {}),
  };
}

const approvalAsked = (task: Task | undefined): boolean =>
  task?.status.state === 'TASK_STATE_INPUT_REQUIRED' && approvalRequestOf(task.status.message) !== undefined;

/** --resume (the last active session) or --session ID with its last turns; else the session to start. */
async function openSession(
  ctx: RunContext,
  client: A2AClient,
  opts: ChatOptions,
): Promise<{ session: Session; recap: Task[] }> {
  if (opts.resume === true || opts.session !== undefined) {
    const r = await client.call(
      sessionResume,
      {
        // --resume is `--session last`: the current project's most recently active session (or yours).
        sessionId: await sessionRef(ctx, client, opts.session ?? LAST, opts.project),
        turns: RECAP_TURNS,
      },
      { signal: ctx.signal },
    );
    return { session: r.session, recap: r.tasks };
  }
  const chosen = await withSessionDefaults(ctx, client, opts);
  const session =
    (await targetSession(ctx, client, chosen.opts)) ?? (await client.call(sessionCreate, {}, { signal: ctx.signal }));
  if (chosen.project) ctx.ui.info(projectLine(chosen.project));
  else {
    const note = noDirectoryProject(ctx);
    if (note) ctx.ui.warn(note);
  }
  return { session, recap: [] };
}

export function registerChat(program: CliCommand, runner: Runner): void {
  program
    .command('chat')
    .description(
      'Talk with the agent, answers streamed; reads lines from stdin (a terminal or a pipe); /help lists the chat commands, /exit or EOF ends',
    )
    .option('--session <id>', `continue this session (its last turns are shown first): ${SESSION_REF_HELP}`)
    .option(
      '--resume',
      "continue the current project's most recently active session, or with no current project yours (its last turns are shown first)",
    )
    .option('--actor <name>', 'start a new session with this actor')
    .option(
      '--project <name>',
      "start a new session whose tools work on this project's files; with --session last, the project whose newest session is meant",
    )
    .option('--skill <name>', 'start a new session with this skill added to the actor (repeatable)', collect)
    .option(CONTEXT_FLAG.flags, CONTEXT_FLAG.description, CONTEXT_FLAG.parse)
    .calls(
      sendStreamingMessage,
      sessionCreate,
      sessionResume,
      cancelTask,
      ...CURRENT_PROJECT_CALLS,
      ...SESSION_REF_CALLS,
      ...CHAT_CALLS,
    )
    .action((opts: ChatOptions, cmd: Command) => runner.run(cmd, 'chat', (ctx) => chat(ctx, opts)));
}

import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  sessionCompact,
  sessionCreate,
  sessionDelete,
  sessionFork,
  sessionList,
  sessionShow,
  sessionUndo,
  CHAT_CONTEXT_MODES,
  type A2AClient,
  type ChatContextMode,
  type Session,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { renderSessionList } from '../render/list.render.ts';
import { oneLine, renderFields } from '../render/table.ts';
import {
  artifactsText,
  fallbackOf,
  messageWords,
  partsText,
  shortTime,
  stateWord,
  styleState,
  toolCallLine,
  toolCallOf,
  usageLine,
  usageOf,
} from '../render/task.render.ts';
import type { Ui } from '../render/ui.ts';
import { compactionLine, compactionOf, usedCompactionOf } from '../render/compaction.render.ts';
import { changesText, undoText } from '../render/undo.render.ts';
import { collect, registerSessionOps } from './session-ops.command.ts';
import { qualify } from '../render/definition.render.ts';
import { choiceOption, intOption } from '../support/options.ts';
import { LAST, sessionOfRef, sessionRef, SESSION_REF_CALLS, SESSION_REF_HELP } from '../support/refs.ts';
import type { RunContext, Runner } from '../runner.ts';

/**
 * The session a message goes to: `--session` (checked, so a typo is "not found" rather than a new
 * empty session), a new one with `--actor`, or none (the agent starts one with its default actor).
 */
/** What a command may say about the session it talks into. */
export interface SessionChoice {
  session?: string;
  actor?: string;
  project?: string;
  skill?: string[];
  /** What a new session's turns are given of the project's files. */
  context?: ChatContextMode;
}

/** `--context map|full`, for the commands that create a session. */
export const CONTEXT_FLAG = {
  flags: '--context <mode>',
  description:
    "what a new session's turns get of the project's files: map (instruction files and a repository map; the model reads the rest with its tools; the default) or full (the files the context service selects)",
  parse: choiceOption(CHAT_CONTEXT_MODES),
} as const;

export async function targetSession(
  ctx: RunContext,
  client: A2AClient,
  opts: SessionChoice,
): Promise<Session | undefined> {
  const fresh = freshSession(opts, '--session');
  // The full id, resolved here: it travels as the message's contextId, which routing takes as it is.
  if (opts.session) return sessionOfRef(ctx, client, opts.session, opts.project);
  if (fresh) return client.call(sessionCreate, sessionParams(opts), { signal: ctx.signal });
  return undefined;
}

/**
 * True when --actor/--project/--skill/--context ask for a new session; refused with `flag` (an
 * existing session) when that is set — except `--session last --project P`, the newest session of P.
 */
export function freshSession(opts: SessionChoice & { resume?: boolean }, flag: '--session' | '--resume'): boolean {
  const lastOfProject = flag === '--session' && opts.session === LAST;
  const fresh =
    opts.actor !== undefined ||
    (opts.project !== undefined && !lastOfProject) ||
    (opts.skill?.length ?? 0) > 0 ||
    opts.context !== undefined;
  const existing = flag === '--session' ? opts.session !== undefined : opts.resume === true;
  if (existing && fresh)
    throw new UsageError(
      `${flag} cannot be combined with --actor, --project, --skill or --context`,
      'a session keeps the actor, project, skills and context mode it was created with',
    );
  return fresh;
}

/** The sessionCreate params of --actor/--project/--skill/--context. */
export function sessionParams(opts: SessionChoice & { title?: string }): {
  actor?: string;
  project?: string;
  skills?: string[];
  context?: ChatContextMode;
  title?: string;
} {
  return {
    ...(opts.actor ? { actor: qualify(opts.actor) } : {}),
    ...(opts.project ? { project: qualify(opts.project) } : {}),
    ...(opts.skill?.length ? { skills: opts.skill.map(qualify) } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    ...(opts.title ? { title: opts.title } : {}),
  };
}

/** Repeatable option values (kept here for the commands that import it from this module). */
export { collect };

function renderSession(s: Session, ui: Ui): string {
  const fields: Array<readonly [string, string | undefined]> = [
    ['actor', s.actor],
    ['title', s.title],
    ['project', s.project],
    ['skills', s.skills?.join(', ')],
    // Only a project-bound session's turns are given files: the mode says nothing without one.
    ['context mode', s.project !== undefined ? (s.context ?? 'map') : s.context],
    ['turns', String(s.taskCount)],
    [
      'forked from',
      s.forkedFrom && `${s.forkedFrom.sessionId}${s.forkedFrom.taskId ? ` at ${s.forkedFrom.taskId}` : ''}`,
    ],
    ['created', ui.rich ? shortTime(s.createdAt) : s.createdAt],
    ['updated', ui.rich ? shortTime(s.updatedAt) : s.updatedAt],
  ];
  if (!ui.rich) return renderFields([['id', s.id], ...fields], ui.mode);
  return `${ui.pal.bold('Session')} ${s.id}\n${renderFields(fields, ui.mode)}`;
}

export function registerSession(program: CliCommand, runner: Runner): void {
  const session = program.command('session').description('Chat sessions (the A2A contexts messages go to)');
  registerSessionCreate(session, runner);
  registerSessionList(session, runner);
  registerSessionShow(session, runner);
  registerSessionUndo(session, runner);
  registerSessionOps(session, runner);
  registerSessionCompact(session, runner);
  registerSessionFork(session, runner);
  registerSessionDelete(session, runner);
}

function registerSessionCreate(session: CliCommand, runner: Runner): void {
  session
    .command('create')
    .description('Start a session with an actor')
    .option('--actor <name>', 'the actor that answers (default: the agent default, builtin/echo)')
    .option('--title <text>', 'a title for the session')
    .option('--project <name>', "the project whose files the session's tools work on")
    .option('--skill <name>', 'add a skill to the actor for this session (repeatable)', collect)
    .option(CONTEXT_FLAG.flags, CONTEXT_FLAG.description, CONTEXT_FLAG.parse)
    .calls(sessionCreate)
    .action((opts: SessionChoice & { title?: string }, cmd: Command) =>
      runner.run(cmd, 'session create', async (ctx) => {
        const client = await ctx.client();
        const s = await client.call(sessionCreate, sessionParams(opts), { signal: ctx.signal });
        ctx.ui.out(renderSession(s, ctx.ui));
        ctx.ui.info(`send into it with: agents send --session ${s.id} "…" (or agents chat --session ${s.id})`);
        return { data: { session: s } };
      }),
    );
}

function registerSessionList(session: CliCommand, runner: Runner): void {
  session
    .command('list')
    .description('List your sessions, most recently active first')
    .option('--project <name>', 'only the sessions bound to this project')
    .option('--page-size <n>', 'sessions per page (1-100)', intOption(1, 100))
    .option('--page-token <token>', 'the page to show (from a previous list)')
    .calls(sessionList)
    .action((opts: { pageSize?: number; pageToken?: string; project?: string }, cmd: Command) =>
      runner.run(cmd, 'session list', async (ctx) => {
        const client = await ctx.client();
        const page = await client.call(
          sessionList,
          {
            ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
            ...(opts.pageToken ? { pageToken: opts.pageToken } : {}),
            ...(opts.project ? { project: qualify(opts.project) } : {}),
          },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        if (page.sessions.length === 0)
          ui.info('no sessions yet: start one with `agents session create` or `agents chat`');
        else ui.out(renderSessionList(page.sessions, ui.mode));
        if (page.nextPageToken) ui.info(`${page.totalSize} sessions; next page: --page-token ${page.nextPageToken}`);
        return { data: page };
      }),
    );
}

function registerSessionShow(session: CliCommand, runner: Runner): void {
  session
    .command('show')
    .description('Show a session and its turns')
    .argument('<id>', SESSION_REF_HELP)
    .option('--turns <n>', 'how many turns to show (most recent)', intOption(1, 1000))
    .calls(sessionShow, ...SESSION_REF_CALLS)
    .action((id: string, opts: { turns?: number }, cmd: Command) =>
      runner.run(cmd, 'session show', async (ctx) => {
        const client = await ctx.client();
        const detail = await client.call(
          sessionShow,
          { sessionId: await sessionRef(ctx, client, id), ...(opts.turns ? { turns: opts.turns } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        ui.out(renderSession(detail.session, ui));
        const first = detail.firstTurn ?? 1;
        for (const [i, t] of detail.tasks.entries()) {
          const compaction = compactionOf(t);
          if (compaction) {
            ui.out(
              ui.rich
                ? `\n${ui.pal.dim(shortTime(t.status.timestamp))} ${ui.pal.bold(compactionLine(compaction))} ${ui.pal.dim(t.id)}\n  ${ui.pal.bold('summary')}  ${compaction.summary.replace(/\n/g, '\n           ')}\n`
                : `compaction\t${t.id}\t${compaction.turns}\t${oneLine(compaction.summary)}\n`,
            );
            continue;
          }
          const asked = partsText(t.history?.find((m) => m.role === 'ROLE_USER')?.parts ?? []);
          const answer = artifactsText(t.artifacts) || messageWords(t.status.message) || '';
          if (ui.rich) {
            ui.out(
              `\n${ui.pal.bold(`#${first + i}`)} ${ui.pal.dim(shortTime(t.status.timestamp))} ${styleState(t.status.state, ui.pal)} ${ui.pal.dim(t.id)}\n`,
            );
            ui.out(
              `  ${ui.pal.bold('you')}    ${asked}\n  ${ui.pal.bold('agent')}  ${answer.replace(/\n/g, '\n         ')}\n`,
            );
            for (const a of t.artifacts ?? []) {
              const call = toolCallOf(a);
              if (call) ui.out(`         ${ui.pal.dim(toolCallLine(call))}\n`);
            }
            const usage = usageOf(t);
            if (usage) ui.out(`  ${ui.pal.dim(`usage  ${usageLine(usage)}`)}\n`);
            const used = usedCompactionOf(t);
            if (used)
              ui.out(
                `  ${ui.pal.dim(`context  the summary of ${used.covers.length} earlier turns (compaction ${used.taskId})`)}\n`,
              );
            const fellBack = fallbackOf(t);
            if (fellBack) ui.out(`  ${ui.pal.dim(fellBack)}\n`);
          } else {
            const usage = usageOf(t);
            ui.out(
              `turn\t${t.id}\t${stateWord(t.status.state)}\t${oneLine(asked)}\t${oneLine(answer)}${usage ? `\t${usage.inputTokens}\t${usage.outputTokens}` : ''}\n`,
            );
          }
        }
        ui.out(changesText(detail.changes ?? [], ui.rich, ui.pal));
        return { data: detail };
      }),
    );
}

function registerSessionUndo(session: CliCommand, runner: Runner): void {
  session
    .command('undo')
    .description(
      "Put the project's files back as they were before a turn (default: the newest turn that changed files); a turn given with --turn is undone with every later one",
    )
    .argument('<session>', SESSION_REF_HELP)
    .option('--turn <n>', 'the turn to undo, with every later one (its number in `agents session show`)', intOption(1))
    .option('--force', 'overwrite files that were changed outside the agent since')
    .calls(sessionUndo, ...SESSION_REF_CALLS)
    .action((id: string, opts: { turn?: number; force?: boolean }, cmd: Command) =>
      runner.run(cmd, 'session undo', async (ctx) => {
        const client = await ctx.client();
        const res = await client.call(
          sessionUndo,
          {
            sessionId: await sessionRef(ctx, client, id),
            ...(opts.turn !== undefined ? { turn: opts.turn } : {}),
            ...(opts.force ? { force: true } : {}),
          },
          { signal: ctx.signal },
        );
        ctx.ui.out(undoText(res, ctx.ui.rich, ctx.ui.pal));
        return { data: res };
      }),
    );
}

function registerSessionCompact(session: CliCommand, runner: Runner): void {
  session
    .command('compact')
    .description("Summarise a session's older turns now (they stay readable; the summary stands in for them)")
    .argument('<id>', SESSION_REF_HELP)
    .option(
      '--keep <n>',
      "the newest turns kept as they are (0-50; default the actor's compaction.keepTurns, 2)",
      intOption(0, 50),
    )
    .calls(sessionCompact, ...SESSION_REF_CALLS)
    .action((id: string, opts: { keep?: number }, cmd: Command) =>
      runner.run(cmd, 'session compact', async (ctx) => {
        const client = await ctx.client();
        const res = await client.call(
          sessionCompact,
          {
            sessionId: await sessionRef(ctx, client, id),
            ...(opts.keep !== undefined ? { keepTurns: opts.keep } : {}),
          },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        const c = compactionOf(res.task);
        const n = res.compacted;
        const sessionId = res.task.contextId;
        if (ui.rich) {
          ui.out(
            `Compacted ${n} turn${n === 1 ? '' : 's'} of session ${sessionId} ${ui.pal.dim(`(task ${res.task.id})`)}\n${ui.pal.dim(c ? compactionLine(c) : '')}\n\n${c?.summary ?? ''}\n`,
          );
        } else ui.out(`compacted\t${sessionId}\t${res.task.id}\t${n}\t${c?.turns ?? n}\n`);
        return { data: res };
      }),
    );
}

function registerSessionFork(session: CliCommand, runner: Runner): void {
  session
    .command('fork')
    .description(
      "Start a new session from another's history (its turns up to --at, default all); the original is untouched",
    )
    .argument('<id>', `the session to fork: ${SESSION_REF_HELP}`)
    .option('--at <task-id>', 'the last turn to copy (default: every turn; all copied turns must be finished)')
    .option('--title <text>', "the new session's title (default: the original's, marked as a fork)")
    .calls(sessionFork, ...SESSION_REF_CALLS)
    .action((id: string, opts: { at?: string; title?: string }, cmd: Command) =>
      runner.run(cmd, 'session fork', async (ctx) => {
        const client = await ctx.client();
        const s = await client.call(
          sessionFork,
          {
            sessionId: await sessionRef(ctx, client, id),
            ...(opts.at ? { atTaskId: opts.at } : {}),
            ...(opts.title ? { title: opts.title } : {}),
          },
          { signal: ctx.signal },
        );
        ctx.ui.out(renderSession(s, ctx.ui));
        ctx.ui.info(`continue it with: agents chat --session ${s.id} (or agents send --session ${s.id} "…")`);
        return { data: { session: s } };
      }),
    );
}

function registerSessionDelete(session: CliCommand, runner: Runner): void {
  session
    .command('delete')
    .description('Delete a session and its tasks (running turns are cancelled)')
    .argument('<id>', SESSION_REF_HELP)
    .calls(sessionDelete, sessionShow, ...SESSION_REF_CALLS)
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'session delete', async (ctx) => {
        const client = await ctx.client();
        // Resolved first, so a prefix or `last` deletes the session that is then named in full.
        const { id: sessionId } = await sessionOfRef(ctx, client, id);
        const res = await client.call(sessionDelete, { sessionId }, { signal: ctx.signal });
        const n = res.tasksDeleted;
        ctx.ui.out(
          ctx.ui.rich
            ? `Deleted session ${sessionId} ${ctx.ui.pal.dim(`(${n} task${n === 1 ? '' : 's'})`)}\n`
            : `deleted\t${sessionId}\t${n}\n`,
        );
        return { data: { sessionId, ...res } };
      }),
    );
}

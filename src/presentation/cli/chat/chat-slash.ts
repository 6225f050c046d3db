/** The chat's own slash commands: `/undo`, `/compact`, `/cost`, `/clear` (`/help` and `/exit` are the dispatcher's). */
import { A2AClientError, sessionCreate } from '../../../protocol/client/index.ts';
import { compactNow, costSoFar, undoTurns } from './chat-calls.ts';
import { exitReasonOf } from '../exit-codes.ts';
import { renderError, reportOf } from '../render/error.render.ts';
import { costText, parseCompactArgs } from '../render/chat-commands.render.ts';
import { parseUndoArgs, undoText } from '../render/undo.render.ts';
import type { SlashCommand, SlashContext, SlashResult } from './slash-types.ts';

// The sum lives with the other front ends' shared chat-command helpers; kept importable from here.
export { costText, sessionCost, type SessionCost } from '../render/chat-commands.render.ts';

/**
 * Runs `work`; a refusal from the agent (an A2A error) is said and recorded, and the chat goes
 * on. Anything else (a lost connection, an interrupt) ends the chat as it would a turn.
 */
async function answered(c: SlashContext, work: () => Promise<SlashResult>): Promise<SlashResult> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof A2AClientError) || c.ctx.signal.aborted) throw err;
    const { ui } = c.ctx;
    const reason = exitReasonOf(err);
    const error = reportOf(err, reason, { kind: 'local' });
    if (ui.human) ui.rawErr(renderError(error, reason, { rich: ui.rich, pal: ui.errPal }));
    return { data: { error } };
  }
}

/** A usage problem: said, recorded, and the chat goes on. */
function refused(c: SlashContext, problem: string): Promise<SlashResult> {
  c.ctx.ui.warn(problem);
  return Promise.resolve({ data: { error: problem } });
}

const undo: SlashCommand = {
  usage: '/undo [turn] [--force]',
  summary: 'put back the files the last turn (or turn N and the ones after it) changed',
  run: (c, args) => {
    const parsed = parseUndoArgs([...args]);
    if (typeof parsed === 'string') return refused(c, parsed);
    return answered(c, async () => {
      const outcome = await undoTurns(c.client, c.session.id, parsed, c.ctx.signal);
      c.ctx.ui.out(undoText(outcome, c.ctx.ui.rich, c.ctx.ui.pal));
      return { data: { outcome } };
    });
  },
};

const compact: SlashCommand = {
  usage: '/compact [keep]',
  summary: 'summarise the older turns now, keeping the newest [keep] as they are',
  run: (c, args) => {
    const parsed = parseCompactArgs(args);
    if (typeof parsed === 'string') return refused(c, parsed);
    return answered(c, async () => {
      const { result: res, line, summary } = await compactNow(c.client, c.session.id, parsed, c.ctx.signal);
      const { ui } = c.ctx;
      if (ui.rich) ui.out(`${ui.pal.dim(line)}\n${summary ? `${summary}\n` : ''}`);
      else ui.out(`compacted\t${res.task.id}\t${res.compacted}\n`);
      return { data: res };
    });
  },
};

const cost: SlashCommand = {
  usage: '/cost',
  summary: 'tokens and cost of this session so far',
  run: (c) =>
    answered(c, async () => {
      const sum = await costSoFar(c.client, c.session.id, c.ctx.signal);
      const { ui } = c.ctx;
      ui.out(
        ui.rich
          ? `${costText(sum)}\n`
          : `cost\t${sum.inputTokens}\t${sum.outputTokens}\t${sum.cost.map((x) => `${x.amount} ${x.currency}`).join(',')}\n`,
      );
      return { data: sum };
    }),
};

const clear: SlashCommand = {
  usage: '/clear',
  summary: 'start a new session with the same actor, project, skills and context',
  run: (c) =>
    answered(c, async () => {
      const { actor, project, skills, context } = c.session;
      const session = await c.client.call(
        sessionCreate,
        {
          actor,
          ...(project !== undefined ? { project } : {}),
          ...(skills && skills.length > 0 ? { skills } : {}),
          ...(context !== undefined ? { context } : {}),
        },
        { signal: c.ctx.signal },
      );
      return { session, data: { from: c.session.id, session } };
    }),
};

export const CHAT_SLASH: Readonly<Record<string, SlashCommand>> = { undo, compact, cost, clear };

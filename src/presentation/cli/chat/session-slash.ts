/**
 * The chat's slash commands that read or change the session on the agent (`/model`, `/diff`,
 * `/tools`, `/context`). Each calls the same method as its `agents session …` command; an error
 * from the agent is thrown (the dispatcher says it and the chat goes on), a wrong argument is said here.
 */
import { actorChoices, nextTurnPreview, sessionChanges, switchActor, type ContextPreview } from './chat-calls.ts';
import { parseDiffArgs } from '../render/chat-commands.render.ts';
import { contextText, sessionDiffText, toolsText } from '../render/session-ops.render.ts';
import type { SlashCommand, SlashContext, SlashResult } from './slash-types.ts';

/** Says what is wrong with the arguments and leaves the session as it is. */
function misuse(c: SlashContext, text: string): SlashResult {
  c.ctx.ui.warn(text);
  return {};
}

const model: SlashCommand = {
  usage: '/model [actor]',
  summary: 'show the actor and the ones you can switch to, or switch the next turns to another actor',
  async run(c, args) {
    const { ui, signal } = c.ctx;
    if (args.length > 1) return misuse(c, `/model takes one actor name (usage: ${model.usage})`);
    const name = args[0];
    if (name === undefined) {
      const { names, more } = await actorChoices(c.client, signal);
      if (ui.rich) {
        const lines = names.map((n) => (n === c.session.actor ? `  ${ui.pal.bold(`${n} (current)`)}` : `  ${n}`));
        ui.out(
          `${ui.pal.bold('actor')} ${c.session.actor}\n${ui.pal.dim('switch with /model <name>; you can use:')}\n${lines.join('\n')}\n${more > 0 ? ui.pal.dim(`  and ${more} more (agents actor list)\n`) : ''}`,
        );
      } else ui.out(`actor\t${c.session.actor}\n${names.map((n) => `available\t${n}\n`).join('')}`);
      return { data: { actor: c.session.actor, available: names, more } };
    }
    const session = await switchActor(c.client, c.session.id, name, signal);
    ui.out(ui.rich ? `next turns: ${ui.pal.bold(session.actor)}\n` : `next turns: ${session.actor}\n`);
    return { session, data: { session } };
  },
};

const diff: SlashCommand = {
  usage: '/diff [turn]',
  summary: "what this session's turns changed in the project's files (one turn's with a number)",
  async run(c, args) {
    const parsed = parseDiffArgs(args);
    if (typeof parsed === 'string') return misuse(c, `${parsed} (usage: ${diff.usage})`);
    const arg = parsed.turn;
    const { ui, signal } = c.ctx;
    const d = await sessionChanges(c.client, c.session.id, parsed, signal);
    const text = sessionDiffText(d, ui.mode);
    ui.out(text === '' ? `no file changes${arg !== undefined ? ` in turn ${arg}` : ''}\n` : text);
    return { data: d };
  },
};

/** What the next turn would send, for `/tools` and `/context`. */
function preview(c: SlashContext): Promise<ContextPreview> {
  return nextTurnPreview(c.client, c.session.id, c.ctx.signal);
}

const tools: SlashCommand = {
  usage: '/tools',
  summary: "the tools the session's actor can use in the next turn",
  async run(c, args) {
    if (args.length > 0) return misuse(c, `/tools takes no arguments`);
    const p = await preview(c);
    c.ctx.ui.out(toolsText(p, c.ctx.ui.mode));
    return { data: { tools: p.tools, problems: p.problems } };
  },
};

const context: SlashCommand = {
  usage: '/context',
  summary: 'what the next turn would send: prompt, history, project files, tools, against the window',
  async run(c, args) {
    if (args.length > 0) return misuse(c, `/context takes no arguments`);
    const p = await preview(c);
    c.ctx.ui.out(contextText(p, c.ctx.ui.mode));
    return { data: p };
  },
};

export const SESSION_SLASH: Readonly<Record<string, SlashCommand>> = { model, diff, tools, context };

/**
 * The chat commands of an ACP session (`/model`, `/undo`, `/diff`, `/compact`, `/cost`, `/tools`,
 * `/context`): each calls the method its `agents chat` command calls and answers in words, as
 * the agent's message; none is sent to the actor. `/clear` is not offered: an editor starts new
 * sessions itself, and the ACP session id it holds must keep naming the same session (session/load).
 */
import type { AvailableCommand } from '@agentclientprotocol/sdk';
import type { A2AClient } from '../../protocol/client/index.ts';
import {
  actorChoices,
  CHAT_CALLS,
  compactNow,
  costSoFar,
  nextTurnPreview,
  sessionChanges,
  switchActor,
  undoTurns,
} from '../cli/chat/chat-calls.ts';
import { costText, parseCompactArgs, parseDiffArgs } from '../cli/render/chat-commands.render.ts';
import { palette } from '../cli/render/colors.ts';
import { contextText, sessionDiffText, toolsText } from '../cli/render/session-ops.render.ts';
import { parseUndoArgs, undoText } from '../cli/render/undo.render.ts';

/** The CLI's readable texts without ANSI colours: an editor shows the agent's words as Markdown. */
const MODE = { rich: true, pal: palette(false), width: undefined };

export const CHAT_COMMANDS: readonly AvailableCommand[] = [
  {
    name: 'model',
    description: "Show the session's actor and the ones you can use, or switch the next turns to another",
    input: { hint: 'an actor name, e.g. local/coder (empty: list them)' },
  },
  {
    name: 'undo',
    description: 'Put back the files the last turn (or turn N and the ones after it) changed',
    input: { hint: 'a turn number, and --force to overwrite changes made outside the agent' },
  },
  { name: 'compact', description: 'Summarise the older turns now', input: { hint: 'how many newest turns to keep' } },
  { name: 'cost', description: 'Tokens and cost of this session so far' },
  { name: 'tools', description: "The tools the session's actor can use in the next turn" },
  { name: 'context', description: 'What the next turn would send: prompt, history, project files, tools' },
];

export type ChatCommandName = 'model' | 'undo' | 'compact' | 'cost' | 'tools' | 'context' | 'diff';
export const CHAT_COMMAND_NAMES: readonly ChatCommandName[] = [
  'model',
  'undo',
  'compact',
  'cost',
  'tools',
  'context',
  'diff',
];

/** The methods these commands call (`agents acp` declares them). */
export const CHAT_COMMAND_CALLS = CHAT_CALLS;

/** What a chat command answered, and the session's actor when it changed (`/model <actor>`). */
export interface ChatAnswer {
  text: string;
  actor?: string;
}

/** Runs one chat command on the session; a wrong argument is answered in words, a refusal of the agent is thrown. */
export async function runChatCommand(
  client: A2AClient,
  session: { id: string; actor: string | undefined },
  name: ChatCommandName,
  arg: string,
  signal: AbortSignal,
): Promise<ChatAnswer> {
  const args = arg.split(/\s+/).filter(Boolean);
  const sessionId = session.id;
  switch (name) {
    case 'model': {
      if (args.length > 1) return { text: '/model takes one actor name (usage: /model [actor])\n' };
      if (args[0] !== undefined) {
        const s = await switchActor(client, sessionId, args[0], signal);
        return { text: `The next turns go to ${s.actor}.\n`, actor: s.actor };
      }
      const { names, more } = await actorChoices(client, signal);
      const lines = names.map((n) => `- ${n}${n === session.actor ? ' (current)' : ''}`);
      if (more > 0) lines.push(`- and ${more} more (agents actor list)`);
      return {
        text: `The actor is ${session.actor ?? 'unknown'}. Switch with /model <name>; you can use:\n${lines.join('\n')}\n`,
      };
    }
    case 'undo': {
      const parsed = parseUndoArgs(args);
      if (typeof parsed === 'string') return { text: `${parsed}\n` };
      const r = await undoTurns(client, sessionId, parsed, signal);
      return { text: undoText(r, true, MODE.pal) };
    }
    case 'diff': {
      const parsed = parseDiffArgs(args);
      if (typeof parsed === 'string') return { text: `${parsed} (usage: /diff [turn])\n` };
      const d = await sessionChanges(client, sessionId, parsed, signal);
      if (d.files.length === 0) return { text: sessionDiffText(d, MODE) };
      // A fenced block keeps the diff's lines as they are in an editor that renders Markdown.
      return { text: `\`\`\`diff\n${sessionDiffText(d, { ...MODE, rich: false })}\`\`\`\n` };
    }
    case 'compact': {
      const parsed = parseCompactArgs(args);
      if (typeof parsed === 'string') return { text: `${parsed}\n` };
      const { line, summary } = await compactNow(client, sessionId, parsed, signal);
      return { text: `${line}\n${summary ? `\n${summary}\n` : ''}` };
    }
    case 'cost': {
      return { text: `${costText(await costSoFar(client, sessionId, signal))}\n` };
    }
    case 'tools':
    case 'context': {
      const p = await nextTurnPreview(client, sessionId, signal);
      const text = name === 'tools' ? toolsText(p, MODE) : contextText(p, MODE);
      // Aligned columns: kept as written.
      return { text: `\`\`\`\n${text}\`\`\`\n` };
    }
  }
}

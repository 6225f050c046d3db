/**
 * The chat view's commands that read or change the open session on the agent (`/model`, `/diff`,
 * `/compact`, `/cost`, `/tools`, `/context`, `/undo`): each calls the method its `agents chat`
 * command calls and says what came back in the chat pane, as a line of the conversation that is
 * never sent to the actor. A refusal goes to the status line with its hint (the Guard).
 */
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
import { costText } from '../cli/render/chat-commands.render.ts';
import { palette } from '../cli/render/colors.ts';
import { contextText, sessionDiffText, toolsText } from '../cli/render/session-ops.render.ts';
import { undoText } from '../cli/render/undo.render.ts';
import type { Guard } from './guard.ts';
import type { SystemAnswer } from './state.ts';
import type { Store } from './store.ts';

/** The CLI's readable texts, without ANSI colours: the pane gives lines their tone itself. */
const MODE = { rich: true, pal: palette(false), width: undefined };

/** The methods these commands call (`agents tui` declares them). */
export const SESSION_COMMAND_CALLS = CHAT_CALLS;

export class SessionCommands {
  private readonly client: A2AClient;
  private readonly store: Store;
  private readonly guard: Guard;

  constructor(client: A2AClient, store: Store, guard: Guard) {
    this.client = client;
    this.store = store;
    this.guard = guard;
  }

  /** `/model`: the actor and the ones to switch to; `/model <actor>`: the next turns go to that one. */
  model(sessionId: string, actor: string | undefined): Promise<void> {
    return this.answer('model', actor ? `/model ${actor}` : '/model', async () => {
      if (actor !== undefined) {
        const session = await switchActor(this.client, sessionId, actor);
        this.store.dispatch({ type: 'session', session });
        return { text: `next turns: ${session.actor}` };
      }
      const current = this.store.get().session?.actor;
      const choices = await actorChoices(this.client);
      const names = choices.names.map((n) => (n === current ? `  ${n} (current)` : `  ${n}`));
      const { more } = choices;
      return {
        text: [
          `actor ${current ?? '?'}`,
          'switch with /model <name>; you can use:',
          ...names,
          ...(more > 0 ? [`  and ${more} more (agents actor list)`] : []),
        ].join('\n'),
      };
    });
  }

  /** `/diff [turn]`: what the session's turns (or one turn) changed in the project's files. */
  diff(sessionId: string, turn: number | undefined): Promise<void> {
    return this.answer('diff', turn !== undefined ? `/diff ${turn}` : '/diff', async () => {
      const d = await sessionChanges(this.client, sessionId, turn !== undefined ? { turn } : {});
      return { text: sessionDiffText(d, MODE), diff: d.files.length > 0 };
    });
  }

  /** `/compact [keep]`: the older turns summarised now. */
  compact(sessionId: string, keepTurns: number | undefined): Promise<void> {
    return this.answer('compact', keepTurns !== undefined ? `/compact ${keepTurns}` : '/compact', async () => {
      const { line, summary } = await compactNow(this.client, sessionId, keepTurns !== undefined ? { keepTurns } : {});
      return { text: summary ? `${line}\n${summary}` : line };
    });
  }

  /** `/cost`: the tokens and cost of the session's turns, summed. */
  cost(sessionId: string): Promise<void> {
    return this.answer('cost', '/cost', async () => {
      return { text: costText(await costSoFar(this.client, sessionId)) };
    });
  }

  /** `/tools` and `/context`: what the next turn would send (its tools, or all of it). */
  preview(sessionId: string, what: 'tools' | 'context'): Promise<void> {
    return this.answer(what, `/${what}`, async () => {
      const p = await nextTurnPreview(this.client, sessionId);
      return { text: what === 'tools' ? toolsText(p, MODE) : contextText(p, MODE) };
    });
  }

  /** `/undo`: the files put back as before the session's newest turn that changed them (or `turn` and later). */
  undo(sessionId: string, cmd: { turn?: number; force: boolean }): Promise<void> {
    const typed = `/undo${cmd.turn !== undefined ? ` ${cmd.turn}` : ''}${cmd.force ? ' --force' : ''}`;
    return this.answer('undo', typed, async () => {
      const r = await undoTurns(this.client, sessionId, cmd);
      return { text: undoText(r, true, MODE.pal) };
    });
  }

  /** Runs a command (busy meanwhile, a refusal to the status line) and puts its answer in the chat. */
  private async answer(
    what: string,
    command: string,
    work: () => Promise<Omit<SystemAnswer, 'command'>>,
  ): Promise<void> {
    await this.guard.run(what, async () => {
      const got = await work();
      this.store.dispatch({ type: 'system', answer: { command, ...got } });
    });
  }
}

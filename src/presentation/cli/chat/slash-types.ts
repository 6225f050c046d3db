/**
 * A chat's slash commands (`/help`, `/model`, …): what each one is given and what it answers.
 * `agents chat` dispatches them (chat/slash.ts); the session ones live in chat/session-slash.ts.
 */
import type { A2AClient, Session } from '../../../protocol/client/index.ts';
import type { RunContext } from '../runner.ts';

/** What a slash command works with: the chat's run, its client and the session as it is now. */
export interface SlashContext {
  readonly ctx: RunContext;
  readonly client: A2AClient;
  readonly session: Session;
}

/** What a slash command did: the session to go on with (when it changed or was replaced), and what `--format json` records. */
export interface SlashResult {
  readonly session?: Session;
  readonly data?: unknown;
}

/** One slash command: its usage line (`/model <actor>`), a one-line summary for `/help`, and what it does. */
export interface SlashCommand {
  readonly usage: string;
  readonly summary: string;
  run(c: SlashContext, args: readonly string[]): Promise<SlashResult>;
}

/** The chat's slash commands that read or change the session on the agent (`/model`, `/diff`, `/tools`, `/context`). */
import type { SlashCommand } from './slash-types.ts';

export const SESSION_SLASH: Readonly<Record<string, SlashCommand>> = {};

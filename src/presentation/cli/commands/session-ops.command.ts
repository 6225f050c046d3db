/**
 * `agents session update|diff|context`: switch what a session's next turns use, see what its turns
 * changed, see what its next turn would send. The chat's `/model`, `/diff`, `/context` call the same methods.
 */
import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  sessionContext,
  sessionDiff,
  sessionUpdate,
  CHAT_CONTEXT_MODES,
  type ChatContextMode,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { contextText, sessionDiffText, toolsText } from '../render/session-ops.render.ts';
import type { Runner } from '../runner.ts';
import { choiceOption, intOption } from '../support/options.ts';
import { sessionRef, SESSION_REF_CALLS, SESSION_REF_HELP } from '../support/refs.ts';
import { qualify } from '../render/definition.render.ts';

/** Repeatable option values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerSessionOps(session: CliCommand, runner: Runner): void {
  registerSessionUpdate(session, runner);
  registerSessionDiff(session, runner);
  registerSessionContext(session, runner);
}

function registerSessionUpdate(session: CliCommand, runner: Runner): void {
  session
    .command('update')
    .description("Change what a session's next turns use: its actor, skills or context mode")
    .argument('<id>', SESSION_REF_HELP)
    .option('--actor <name>', 'the actor of the next turns')
    .option('--skill <name>', "the session's skills from now on (repeatable; replaces them)", collect)
    .option('--no-skills', 'remove the skills the session adds to its actor')
    .option(
      '--context <mode>',
      "what the next turns get of the project's files (map or full)",
      choiceOption(CHAT_CONTEXT_MODES),
    )
    .calls(sessionUpdate, ...SESSION_REF_CALLS)
    .action(
      (
        id: string,
        opts: { actor?: string; skill?: string[]; skills?: boolean; context?: ChatContextMode },
        cmd: Command,
      ) =>
        runner.run(cmd, 'session update', async (ctx) => {
          if (opts.skills === false && opts.skill?.length)
            throw new UsageError('--skill cannot be combined with --no-skills', 'give the skills, or remove them all');
          const skills = opts.skills === false ? [] : opts.skill?.map(qualify);
          if (opts.actor === undefined && skills === undefined && opts.context === undefined)
            throw new UsageError(
              'nothing to update',
              `give --actor, --skill, --no-skills or --context (e.g. agents session update ${id} --actor local/coder)`,
            );
          const client = await ctx.client();
          const s = await client.call(
            sessionUpdate,
            {
              sessionId: await sessionRef(ctx, client, id),
              ...(opts.actor !== undefined ? { actor: qualify(opts.actor) } : {}),
              ...(skills !== undefined ? { skills } : {}),
              ...(opts.context !== undefined ? { context: opts.context } : {}),
            },
            { signal: ctx.signal },
          );
          const { ui } = ctx;
          const skillsSaid = s.skills?.length ? s.skills.join(', ') : 'none';
          ui.out(
            ui.rich
              ? `Session ${s.id}: next turns use ${ui.pal.bold(s.actor)} ${ui.pal.dim(`(skills: ${skillsSaid}; context: ${s.context ?? 'map'})`)}\n`
              : `updated\t${s.id}\t${s.actor}\t${skillsSaid}\t${s.context ?? 'map'}\n`,
          );
          return { data: { session: s } };
        }),
    );
}

function registerSessionDiff(session: CliCommand, runner: Runner): void {
  session
    .command('diff')
    .description(
      "Show what a session's turns changed in the project's files (undone turns left out; files changed outside the agent since are marked)",
    )
    .argument('<id>', SESSION_REF_HELP)
    .option('--turn <n>', 'only what this turn changed (its number in `agents session show`)', intOption(1))
    .calls(sessionDiff, ...SESSION_REF_CALLS)
    .action((id: string, opts: { turn?: number }, cmd: Command) =>
      runner.run(cmd, 'session diff', async (ctx) => {
        const client = await ctx.client();
        const d = await client.call(
          sessionDiff,
          { sessionId: await sessionRef(ctx, client, id), ...(opts.turn !== undefined ? { turn: opts.turn } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        ui.out(sessionDiffText(d, ui.mode));
        if (d.files.length === 0 && !ui.rich) ui.info(`no file changes in session ${d.sessionId}`);
        return { data: d };
      }),
    );
}

function registerSessionContext(session: CliCommand, runner: Runner): void {
  session
    .command('context')
    .description("Show what a session's next turn would send to its model (nothing is sent)")
    .argument('<id>', SESSION_REF_HELP)
    .option('--message <text>', "the next message (its words rank the project's files)")
    .option('--tools', 'list the tools the next turn offers')
    .calls(sessionContext, ...SESSION_REF_CALLS)
    .action((id: string, opts: { message?: string; tools?: boolean }, cmd: Command) =>
      runner.run(cmd, 'session context', async (ctx) => {
        const client = await ctx.client();
        const p = await client.call(
          sessionContext,
          {
            sessionId: await sessionRef(ctx, client, id),
            ...(opts.message !== undefined ? { message: opts.message } : {}),
          },
          { signal: ctx.signal },
        );
        ctx.ui.out(opts.tools ? toolsText(p, ctx.ui.mode) : contextText(p, ctx.ui.mode));
        return { data: p };
      }),
    );
}

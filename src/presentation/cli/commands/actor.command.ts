import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  sendStreamingMessage,
  sessionCreate,
  sessionDelete,
  type ChatContextMode,
  messageOf,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { StreamPrinter } from '../render/stream.render.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { userMessage } from '../support/message.ts';
import { reportTaskEnd, exitForTask } from '../support/task-outcome.ts';
import { registerRegistryGroup, usedBy, yesNo, type FieldLine } from './registry-group.ts';
import { collect, CONTEXT_FLAG, sessionParams } from './session.command.ts';

/** Where the key comes from and whether it is there; an endpoint that needs none (Ollama) says so. */
function keyLine(
  def: { apiKeyEnv?: string | undefined; apiKeyFile?: string | undefined; apiKeySecret?: string | undefined },
  key: { present: boolean; source?: string | undefined; problem?: string | undefined },
): string {
  if (key.present) return `present (${key.source ?? ''})`;
  if (def.apiKeyEnv === undefined && def.apiKeyFile === undefined && def.apiKeySecret === undefined)
    return 'none configured (requests go without a key; set apiKeySecret, apiKeyEnv or apiKeyFile if the endpoint needs one)';
  return `missing: ${key.problem ?? ''}`;
}

interface RunOptions {
  skill?: string[];
  project?: string;
  context?: ChatContextMode;
  keepSession?: boolean;
}

/** One streamed turn with an actor, in a session of its own that is deleted after (unless kept). */
async function runActor(ctx: RunContext, actor: string, prompt: string, opts: RunOptions): Promise<Outcome> {
  if (prompt.trim() === '') throw new UsageError('the prompt is empty');
  const client = await ctx.client();
  const name = actor.includes('/') ? actor : `local/${actor}`;
  const session = await client.call(
    sessionCreate,
    sessionParams({ actor: name, ...opts, title: `actor run ${name}` }),
    { signal: ctx.signal },
  );
  const printer = new StreamPrinter(ctx.ui, 'answer');
  try {
    const message = userMessage(prompt, { contextId: session.id });
    for await (const { seq, event } of client.stream(sendStreamingMessage, { message }, { signal: ctx.signal }))
      printer.push(seq, event);
    printer.end();
  } finally {
    printer.end();
    // The turn is over (or was interrupted): the session goes, unless asked to keep it.
    if (!opts.keepSession)
      await client.call(sessionDelete, { sessionId: session.id }).catch((err: unknown) => {
        ctx.ui.warn(`could not delete the session ${session.id}: ${messageOf(err)}`);
      });
  }
  reportTaskEnd(ctx.ui, printer.task);
  if (opts.keepSession) ctx.ui.info(`kept the session: agents chat --session ${session.id}`);
  return {
    data: { session: opts.keepSession ? session : null, task: printer.task ?? null, events: printer.events },
    exit: exitForTask(printer.task),
  };
}

/** `agents actor …`: who does the work (an LLM endpoint, or a built-in deterministic actor). */
export function registerActor(program: CliCommand, runner: Runner): void {
  const group = registerRegistryGroup(program, runner, {
    kind: 'actor',
    description: 'Actors: the models (or built-in deterministic actors) that strategize and execute',
    typeFilter: 'provider',
    columns: [
      { header: 'PROVIDER', value: (e) => e.definition.provider },
      { header: 'MODEL', value: (e) => e.definition.model },
    ],
    facts: (e): FieldLine[] => {
      const d = e.derived;
      return [
        ['provider', d.provider],
        ['model', d.model],
        ...(d.endpoint ? [['endpoint', d.endpoint] as const] : []),
        ...(d.key ? [['api key', keyLine(e.definition, d.key)] as const] : []),
        ['runnable', yesNo(d.runnable)],
        ...d.skills.map((s) => ['skill', s] as const),
        ...d.tools.map((t) => ['tool', t] as const),
        ...usedBy(d),
      ];
    },
  });
  group
    .command('run')
    .description('One streamed turn with an actor (no session is kept unless --keep-session)')
    .argument('<actor>', 'the actor (namespace/name; a bare name means local/)')
    .argument('<prompt...>', 'what to ask')
    .option('--skill <name>', 'add a skill to the actor for this turn (repeatable)', collect)
    .option('--project <name>', "the project whose files the actor's tools work on")
    .option(CONTEXT_FLAG.flags, CONTEXT_FLAG.description, CONTEXT_FLAG.parse)
    .option('--keep-session', 'keep the session, to go on with agents chat --session')
    .calls(sessionCreate, sendStreamingMessage, sessionDelete)
    .action((actor: string, words: string[], opts: RunOptions, cmd: Command) =>
      runner.run(cmd, 'actor run', (ctx) => runActor(ctx, actor, words.join(' '), opts)),
    );
}

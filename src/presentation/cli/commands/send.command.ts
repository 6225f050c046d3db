import type { Command } from 'commander';
import { sendMessage, sendStreamingMessage } from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { StreamPrinter } from '../render/stream.ts';
import { artifactsText, messageText, renderTask } from '../render/task.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';
import { eventLines } from '../support/events.ts';
import { userMessage } from '../support/message.ts';
import { collect, CONTEXT_FLAG, targetSession, type SessionChoice } from './session.command.ts';
import { exitForTask, reportTaskEnd } from '../support/task-outcome.ts';

interface SendOptions extends SessionChoice {
  stream?: boolean;
  events?: boolean;
  task?: string;
  wait: boolean;
}

async function send(ctx: RunContext, text: string, opts: SendOptions): Promise<Outcome> {
  if (opts.stream && !opts.wait) throw new UsageError('--no-wait cannot be combined with --stream');
  if (opts.events && !opts.wait) throw new UsageError('--no-wait cannot be combined with --events');
  const lines = eventLines(ctx, opts.events);
  if (opts.task && (opts.session || opts.actor || opts.project || opts.skill?.length || opts.context))
    throw new UsageError(
      '--task continues an existing task: it cannot be combined with --session, --actor, --project, --skill or --context',
    );
  if (text === '-') text = await readAll(ctx.io.stdin);
  if (text.trim() === '') throw new UsageError('the message is empty');
  const client = await ctx.client();
  const session = await targetSession(client, opts, ctx.signal);
  const message = userMessage(text, { contextId: session?.id, taskId: opts.task });
  const { ui } = ctx;

  // --events streams too: each event is a line as it arrives.
  if (opts.stream || lines) {
    const printer = new StreamPrinter(ui, 'answer');
    for await (const { seq, event } of client.stream(sendStreamingMessage, { message }, { signal: ctx.signal })) {
      printer.push(seq, event);
      lines?.event(seq, event);
    }
    printer.end();
    if (printer.events.length === 0) throw new Error('the agent ended the stream without sending anything');
    reportTaskEnd(ui, printer.task);
    const data: Record<string, unknown> = { task: printer.task ?? null, events: printer.events };
    if (printer.message) data['message'] = printer.message;
    return { data, exit: exitForTask(printer.task) };
  }

  const result = await client.call(
    sendMessage,
    { message, ...(opts.wait ? {} : { configuration: { returnImmediately: true } }) },
    { signal: ctx.signal },
  );
  if ('message' in result) {
    ui.out(`${messageText(result.message) ?? ''}\n`);
    return { data: result };
  }
  const task = result.task;
  const answer = artifactsText(task.artifacts);
  if (answer && opts.wait) {
    ui.out(answer.endsWith('\n') ? answer : `${answer}\n`);
    reportTaskEnd(ui, task);
  } else {
    ui.out(renderTask(task, ui.mode));
  }
  return { data: result, exit: exitForTask(task) };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8').replace(/\n$/, '');
}

export function registerSend(program: Command, runner: Runner): void {
  program
    .command('send')
    .description('Send a message to the agent and print its answer (use - to read the message from stdin)')
    .argument('<text...>', 'the message')
    .option('--stream', 'print the answer as it is produced (SendStreamingMessage)')
    .option('--events', 'with --format json: one JSON line per event as it happens, then the result line')
    .option('--session <id>', 'send into this session')
    .option('--actor <name>', 'start a new session with this actor (builtin/echo, local/my-llm, …)')
    .option('--project <name>', "start a new session whose tools work on this project's files")
    .option('--skill <name>', 'start a new session with this skill added to the actor (repeatable)', collect)
    .option(CONTEXT_FLAG.flags, CONTEXT_FLAG.description, CONTEXT_FLAG.parse)
    .option('--task <id>', 'answer a task that waits for input (continues it)')
    .option('--no-wait', 'return as soon as the agent accepted the task')
    .action((words: string[], opts: SendOptions, cmd: Command) =>
      runner.run(cmd, 'send', (ctx) => send(ctx, words.join(' '), opts)),
    );
}

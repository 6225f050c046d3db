import { Option, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  A2AClientError,
  cancelTask,
  getTask,
  listTasks,
  subscribeToTask,
  type Task,
} from '../../../protocol/client/index.ts';
import type { Palette } from '../render/colors.ts';
import { StreamPrinter } from '../render/stream.render.ts';
import { renderTable, type Column } from '../render/table.ts';
import { messageWords, renderTask, shortTime, STATE_WORDS, stateWord, styleState } from '../render/task.render.ts';
import type { Runner } from '../runner.ts';
import { intOption } from '../support/options.ts';
import { exitForTask } from '../support/task-outcome.ts';

const taskColumns = (rich: boolean, pal: Palette): Column<Task>[] => [
  { header: 'ID', value: (t) => t.id },
  {
    header: 'STATE',
    value: (t) => stateWord(t.status.state),
    style: (s, t) => (rich ? styleState(t.status.state, pal) : s),
  },
  { header: 'CONTEXT', value: (t) => t.contextId },
  { header: 'UPDATED', value: (t) => (rich ? shortTime(t.status.timestamp) : (t.status.timestamp ?? '')) },
  { header: 'STATUS', value: (t) => messageWords(t.status.message) ?? '' },
];

interface ListOptions {
  context?: string;
  status?: string;
  pageSize?: number;
  pageToken?: string;
}

export function registerTask(program: CliCommand, runner: Runner): void {
  const task = program.command('task').description('A2A tasks: the turns the agent works on');
  registerTaskGet(task, runner);
  registerTaskList(task, runner);
  registerTaskCancel(task, runner);
  registerTaskWatch(task, runner);
}

function registerTaskGet(task: CliCommand, runner: Runner): void {
  task
    .command('get')
    .description('Show a task: state, answer and history')
    .argument('<id>', 'the task id')
    .option('--history <n>', 'how many history messages to include (most recent)', intOption(0))
    .calls(getTask)
    .action((id: string, opts: { history?: number }, cmd: Command) =>
      runner.run(cmd, 'task get', async (ctx) => {
        const client = await ctx.client();
        const t = await client.call(
          getTask,
          { id, ...(opts.history !== undefined ? { historyLength: opts.history } : {}) },
          { signal: ctx.signal },
        );
        ctx.ui.out(renderTask(t, ctx.ui.mode));
        return { data: { task: t } };
      }),
    );
}

function registerTaskList(task: CliCommand, runner: Runner): void {
  task
    .command('list')
    .description('List your tasks, newest first')
    .option('--context <id>', 'only the tasks of this session (context)')
    .addOption(new Option('--status <state>', 'only tasks in this state').choices(Object.keys(STATE_WORDS)))
    .option('--page-size <n>', 'tasks per page (1-100)', intOption(1, 100))
    .option('--page-token <token>', 'the page to show (from a previous list)')
    .calls(listTasks)
    .action((opts: ListOptions, cmd: Command) =>
      runner.run(cmd, 'task list', async (ctx) => {
        const client = await ctx.client();
        const params = {
          ...(opts.context ? { contextId: opts.context } : {}),
          ...(opts.status ? { status: STATE_WORDS[opts.status] } : {}),
          ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
          ...(opts.pageToken ? { pageToken: opts.pageToken } : {}),
        };
        const page = await client.call(listTasks, params, { signal: ctx.signal });
        const { ui } = ctx;
        if (page.tasks.length === 0) ui.info('no tasks');
        else ui.out(renderTable(page.tasks, taskColumns(ui.rich, ui.pal), ui.mode));
        if (page.nextPageToken) ui.info(`${page.totalSize} tasks; next page: --page-token ${page.nextPageToken}`);
        return { data: page };
      }),
    );
}

function registerTaskCancel(task: CliCommand, runner: Runner): void {
  task
    .command('cancel')
    .description('Cancel a task that has not finished')
    .argument('<id>', 'the task id')
    .calls(cancelTask)
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'task cancel', async (ctx) => {
        const client = await ctx.client();
        const t = await client.call(cancelTask, { id }, { signal: ctx.signal });
        ctx.ui.out(renderTask(t, ctx.ui.mode));
        return { data: { task: t } };
      }),
    );
}

function registerTaskWatch(task: CliCommand, runner: Runner): void {
  task
    .command('watch')
    .description('Follow a task live until it ends (exit 0 when completed, 9 when failed, rejected or canceled)')
    .argument('<id>', 'the task id')
    .calls(subscribeToTask, getTask)
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'task watch', async (ctx) => {
        const client = await ctx.client();
        const printer = new StreamPrinter(ctx.ui, 'events');
        try {
          for await (const { seq, event } of client.stream(subscribeToTask, { id }, { signal: ctx.signal }))
            printer.push(seq, event);
        } catch (err) {
          if (!(
            err instanceof A2AClientError &&
            err.type === 'UnsupportedOperationError' &&
            printer.events.length === 0
          ))
            throw err;
        }
        if (printer.events.length === 0 && !ctx.signal.aborted) {
          // A finished task cannot be subscribed to (the agent says so, or sends nothing): its
          // final state is what the user wants to see.
          const t = await client.call(getTask, { id }, { signal: ctx.signal });
          ctx.ui.info(`task ${id} had already ended`);
          ctx.ui.out(renderTask(t, ctx.ui.mode));
          return { data: { task: t, events: [] }, exit: exitForTask(t) };
        }
        printer.end();
        return { data: { task: printer.task ?? null, events: printer.events }, exit: exitForTask(printer.task) };
      }),
    );
}

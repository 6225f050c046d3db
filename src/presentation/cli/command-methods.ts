/**
 * Which A2A methods each CLI command calls, read from the command tree: every command declares its
 * methods where it is registered (`.calls(…)`, a CliCommand's, beside the code that makes the
 * calls), so adding a command lists its methods once. The declaration is binding: a command's
 * client refuses any method it does not declare (declared-client.ts), and the end-to-end suites
 * record every call each command makes and check this table against it
 * (test/support/cli-trace-check.ts). A test also checks the table against the command tree and the
 * method table, so a command without a method (or a method users would expect a command for,
 * without one) fails the build. Helpers that call methods for several commands export their lists
 * (FOLLOW_CALLS, PHASE_CALLS, PLAN_VIEW_CALLS) next to the code that makes the calls.
 * docs/reference/cli.md is generated from this table (`npm run generate`).
 */
import type { Command } from 'commander';
import { declaredCallsOf } from './cli-command.ts';
import { buildProgram } from './index.ts';

/** Each command of a tree that declares calls, by its path ('plan use'), with the methods it declares. */
export function commandMethods(program: Command): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  const walk = (c: Command, path: readonly string[]): void => {
    const calls = declaredCallsOf(c);
    if (calls.length > 0) out[path.join(' ')] = calls;
    for (const sub of c.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return out;
}

/** The `agents` tree's table; building the tree only registers commands, so nothing is served. */
export const COMMAND_METHODS: Readonly<Record<string, readonly string[]>> = commandMethods(
  buildProgram({
    version: 'command table',
    serve: () => Promise.reject(new Error('the command table is read from the tree; nothing is served')),
  }),
);

/**
 * Commands that are not a client of a method: `serve` is the server itself; `logout` only forgets a
 * stored login; `completion` prints a script made from the command tree; `config …` edits the CLI's
 * own config.yaml; `server migrate|backup|restore` open the server's database directly, as `serve` does.
 */
export const SERVER_COMMANDS: readonly string[] = [
  'serve',
  'logout',
  'completion',
  'config list',
  'config get',
  'config set',
  'config unset',
  'server migrate',
  'server backup',
  'server restore',
];

/** Methods meant for programs rather than a person at a terminal, with why. */
export const NO_COMMAND_EXPECTED: Readonly<Record<string, string>> = {
  CreateTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  GetTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  ListTaskPushNotificationConfigs: 'webhooks are registered by the programs that receive them',
  DeleteTaskPushNotificationConfig: 'webhooks are registered by the programs that receive them',
  'rpc.discover': 'the OpenRPC document is for tools (also at GET /openrpc.json)',
};

import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  checkSetting,
  CONFIG_KEYS,
  configValues,
  readConfigDocument,
  setConfigValue,
  unsetConfigValue,
  writeConfigDocument,
} from '../config-file.ts';
import { configPath } from '../config-paths.ts';
import { renderFields } from '../render/table.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';

/** A token is a credential: shown only as whether it is set. */
const shown = (key: string, value: string | undefined): string | undefined =>
  value !== undefined && key === 'token' ? '(set, hidden)' : value;

function list(ctx: RunContext): Outcome {
  const path = configPath(ctx.io.env);
  const values = configValues(readConfigDocument(path));
  const { ui } = ctx;
  const fields = CONFIG_KEYS.map((k) => [k, shown(k, values[k])] as const);
  if (ui.rich) ui.out(`${ui.pal.bold('Config')} ${path}\n${renderFields(fields, ui.mode)}`);
  else {
    ui.out(`file\t${path}\n`);
    for (const [k, v] of fields) if (v !== undefined) ui.out(`${k}\t${v}\n`);
  }
  const data: Record<string, unknown> = { path, values: { ...values } };
  if (values.token !== undefined) (data['values'] as Record<string, unknown>)['token'] = '(set, hidden)';
  return { data };
}

function get(ctx: RunContext, key: string): Outcome {
  const path = configPath(ctx.io.env);
  checkSetting(path, key, 'x');
  const values = configValues(readConfigDocument(path));
  const value = values[key as keyof typeof values];
  // Unset prints nothing on stdout (so `$(agents config get x)` is empty) and says so on stderr.
  if (value === undefined) ctx.ui.info(`${key} is not set in ${path}`);
  else ctx.ui.out(`${value}\n`);
  return { data: { path, key, value: value ?? null } };
}

function set(ctx: RunContext, key: string, value: string): Outcome {
  const cfg = readConfigDocument(configPath(ctx.io.env));
  setConfigValue(cfg, key, value);
  writeConfigDocument(cfg);
  const { ui } = ctx;
  if (ui.rich) ui.out(`Set ${ui.pal.bold(key)} = ${shown(key, value) ?? ''} in ${cfg.path}\n`);
  else ui.out(`set\t${key}\t${cfg.path}\n`);
  return { data: { path: cfg.path, key, value: shown(key, value) } };
}

function unset(ctx: RunContext, key: string): Outcome {
  const cfg = readConfigDocument(configPath(ctx.io.env));
  const removed = unsetConfigValue(cfg, key);
  if (removed) writeConfigDocument(cfg);
  const { ui } = ctx;
  const what = removed ? `Unset ${key} in ${cfg.path}` : `${key} was not set in ${cfg.path}`;
  if (ui.rich) ui.out(`${what}\n`);
  else ui.out(`${removed ? 'unset' : 'not-set'}\t${key}\t${cfg.path}\n`);
  return { data: { path: cfg.path, key, removed } };
}

/** `agents config get|set|unset|list`: the CLI's own config.yaml, edited in place (comments stay). */
export function registerConfig(program: CliCommand, runner: Runner): void {
  const group = program.command('config').description(`The CLI's config file (config.yaml): ${CONFIG_KEYS.join(', ')}`);
  const keyHelp = `one of ${CONFIG_KEYS.join(', ')}`;
  group
    .command('list')
    .description('Show where the config file is and every key in it')
    .action((_opts: unknown, cmd: Command) => runner.run(cmd, 'config list', (ctx) => Promise.resolve(list(ctx))));
  group
    .command('get')
    .description("Print one key's value (nothing on stdout when it is not set)")
    .argument('<key>', keyHelp)
    .action((key: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'config get', (ctx) => Promise.resolve(get(ctx, key))),
    );
  group
    .command('set')
    .description('Set one key, keeping the rest of the file (comments, order) as it is')
    .argument('<key>', keyHelp)
    .argument('<value>', 'the value')
    .action((key: string, value: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'config set', (ctx) => Promise.resolve(set(ctx, key, value))),
    );
  group
    .command('unset')
    .description('Remove one key from the file')
    .argument('<key>', keyHelp)
    .action((key: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'config unset', (ctx) => Promise.resolve(unset(ctx, key))),
    );
}

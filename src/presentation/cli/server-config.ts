/**
 * The server's configuration file (`agents serve --config server.yaml`, env CLEVERAGENTS_CONFIG).
 * Its keys are read off `agents serve`'s own options (commander's Option objects), not listed
 * here: a flag added to serve is a key of the file at once, and each value goes through its
 * option's own parser, so the file and the command line accept and refuse exactly the same values.
 * Keys are the options' camelCase attribute names (`databaseUrl`), as in the CLI's config.yaml and
 * in what commander hands the command; `database-url` is answered with "did you mean databaseUrl".
 */
import { statSync } from 'node:fs';
import type { Command, Option } from 'commander';
import type { CliCommand } from './cli-command.ts';
import { registerServe, serveOptionsOf, type ServeOptions } from './commands/serve.command.ts';
import type { ExitStatus } from './exit-status.ts';
import type { CliIo } from './render/ui.ts';
import { isMap, isScalar, isSeq, type Node, type Pair } from 'yaml';
import { UsageError } from './exit-codes.ts';
import { lineOf, readYamlFile, unknownKeyMessage } from './support/yaml-file.ts';
import { messageOf } from '../../protocol/client/index.ts';

/** The environment variable naming the file when --config is not given. */
export const SERVER_CONFIG_ENV = 'CLEVERAGENTS_CONFIG';

/** Global options `agents serve` reads (the root command's), and so keys of the file too. */
const GLOBAL_KEYS = ['token', 'dataDir', 'verbose'] as const;

/**
 * Options that are no settings: the mode is chosen by whoever starts the process (`--stdio` is
 * how a client spawns its agent), and the file cannot name another file.
 */
const NOT_IN_FILE = new Set(['stdio', 'config', 'help']);

/** One key of the file: the option it sets, on the command that holds it, and its variable. */
export interface ServerConfigKey {
  key: string;
  option: Option;
  command: Command;
  /** The environment variable the option's help names (`env CLEVERAGENTS_…`): it beats the file. */
  env?: string | undefined;
}

/** One setting of the file, parsed as its flag would be. */
export interface ServerSetting extends ServerConfigKey {
  value: unknown;
  line: number;
}

/** The serve command of a program (the whole tree, or `agents serve` alone). */
export function serveCommandOf(program: Command): Command {
  const serve = program.commands.find((c) => c.name() === 'serve');
  if (!serve) throw new Error('the program has no serve command');
  return serve;
}

/** `--config <file>` on `agents serve` (added after its own options, so serve.command.ts need not know). */
export function addServerConfigOption(program: Command): void {
  serveCommandOf(program).option(
    '--config <file>',
    `read these settings from a YAML file: every flag of serve, camelCase (port: 8080, databaseUrl: …, allowEgress: [host:port]); flags beat env beat the file (env ${SERVER_CONFIG_ENV})`,
  );
}

/** Every key of the file, from serve's options and the global ones it reads, in `--help` order. */
export function serverConfigKeys(serve: Command): ServerConfigKey[] {
  const keyOf = (command: Command, option: Option): ServerConfigKey => ({
    key: option.attributeName(),
    option,
    command,
    env: /\benv (CLEVERAGENTS_[A-Z0-9_]+)/.exec(option.description)?.[1],
  });
  const own = serve.options.filter((o) => !o.hidden && !NOT_IN_FILE.has(o.attributeName())).map((o) => keyOf(serve, o));
  const root = serve.parent;
  const globals = GLOBAL_KEYS.flatMap((k) => {
    const option = root?.options.find((o) => o.attributeName() === k);
    return root && option ? [keyOf(root, option)] : [];
  });
  return [...own, ...globals];
}

/** The file's path: `--config`, else CLEVERAGENTS_CONFIG; undefined when neither names one. */
export function serverConfigPath(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const path = flag ?? env[SERVER_CONFIG_ENV];
  return path === undefined || path.trim() === '' ? undefined : path;
}

/**
 * Reads and checks the whole file before anything opens: an unknown key ("did you mean"), a value
 * its flag's parser refuses, or bad YAML is a usage error naming `file:line` (exit code 2).
 */
export function readServerConfig(path: string, keys: readonly ServerConfigKey[]): ServerSetting[] {
  const names = keys.map((k) => k.key);
  const file = readYamlFile(path, {
    missingIsEmpty: false,
    what: 'the server config file',
    syntaxHint: 'fix the file (agents serve --help lists the settings; they are the flags in camelCase)',
    keys: names,
  });
  const pairs: Array<Pair<unknown, unknown>> = isMap(file.doc.contents) ? file.doc.contents.items : [];
  const out: ServerSetting[] = [];
  for (const pair of pairs) {
    const keyNode = isScalar(pair.key) ? pair.key : undefined;
    const name = String(keyNode?.value ?? pair.key);
    const line = lineOf(file, keyNode);
    const key = keys.find((k) => k.key === name);
    if (!key) throw new UsageError(`${path}:${line}: ${unknownKeyMessage(name, names)}`);
    const valueNode = pair.value as Node | null;
    if (valueNode === null || (isScalar(valueNode) && valueNode.value === null)) continue;
    const valueLine = lineOf(file, valueNode);
    try {
      out.push({ ...key, value: parseValue(key.option, valueNode), line: valueLine });
    } catch (err) {
      throw new UsageError(`${path}:${valueLine}: ${name}: ${messageOf(err)}`);
    }
  }
  return out;
}

/** A value as its flag would take it: through the option's parser, a list folded as repeated flags. */
function parseValue(option: Option, node: Node): unknown {
  if (option.isBoolean() || option.negate) {
    const v = isScalar(node) ? node.value : undefined;
    if (typeof v !== 'boolean') throw new Error('must be true or false');
    // `--no-x` sets x to false when given: in the file, `x: false` says the same.
    return v;
  }
  const parse = (text: string, previous: unknown): unknown => {
    if (option.argChoices && !option.argChoices.includes(text))
      throw new Error(`must be one of ${option.argChoices.join(', ')}`);
    return option.parseArg ? option.parseArg(text, previous) : text;
  };
  if (isSeq(node)) {
    const texts = node.items.map((item) => scalarText(item as Node));
    if (option.variadic) return texts.map((t) => parse(t, undefined));
    // A repeatable flag's parser collects (`--allow-egress a --allow-egress b`): fold the list through it.
    const folded = option.parseArg ? texts.reduce<unknown>((prev, t) => parse(t, prev), undefined) : undefined;
    if (!Array.isArray(folded)) throw new Error('takes one value, not a list');
    return folded;
  }
  const text = scalarText(node);
  return option.variadic ? [parse(text, undefined)] : parse(text, option.defaultValue);
}

/** A scalar's text as it would be typed on the command line (`8080`, `true`); a mapping is refused. */
function scalarText(node: Node): string {
  if (!isScalar(node)) throw new Error('must be a value or a list of values, not a mapping');
  const v = node.value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Error('must be a value');
}

/**
 * Sets the file's settings on the commands where neither a flag nor the option's environment
 * variable gave one: flags beat the environment (read by the composition root) beat the file
 * beat the defaults. Returns warnings for the operator (a readable file holding secrets).
 */
export function applyServerConfig(serve: Command, env: NodeJS.ProcessEnv): string[] {
  const flags = serve.opts<{ config?: string; stdio?: boolean }>();
  // The variable names the server's file; the local agents a CLI spawns (`serve --stdio`) inherit
  // the user's environment and must not take the server's data directory from it: --config only.
  const path = serverConfigPath(flags.config, flags.stdio === true ? {} : env);
  if (path === undefined) return [];
  const settings = readServerConfig(path, serverConfigKeys(serve));
  for (const s of settings) {
    const attr = s.option.attributeName();
    if (s.command.getOptionValueSource(attr) === 'cli') continue;
    if (s.env !== undefined && (env[s.env] ?? '') !== '') continue;
    s.command.setOptionValueWithSource(attr, s.value, 'config');
  }
  return secretWarnings(path, settings);
}

/** The file may hold the token and a database password: fine, if nobody else can read it. */
function secretWarnings(path: string, settings: readonly ServerSetting[]): string[] {
  const secrets = settings
    .filter((s) => /token|secret|password/i.test(s.key) || hasPassword(s.value))
    .map((s) => s.key);
  if (secrets.length === 0) return [];
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return [];
  }
  if ((mode & 0o077) === 0) return [];
  return [
    `the server config file ${path} holds secrets (${secrets.join(', ')}) and may be read by group or others (mode ${(mode & 0o777).toString(8)}): run chmod 600 ${path}`,
  ];
}

function hasPassword(value: unknown): boolean {
  if (typeof value !== 'string' || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return false;
  try {
    return new URL(value).password !== '';
  } catch {
    return false;
  }
}

/**
 * `agents serve` with `--config`: the file's settings are set on the commands before the options
 * are handed over (inside serve's own error handling, so a bad file is a start-up error, exit 2,
 * and nothing has opened yet).
 */
export function registerServeWithConfig(
  program: CliCommand,
  serve: (opts: ServeOptions) => Promise<number>,
  status: ExitStatus,
  io: CliIo,
): void {
  registerServe(program, () => serve(withServerConfig(program, io)), status);
  addServerConfigOption(program);
}

/** serve's options with the file's settings under the flags. */
function withServerConfig(program: Command, io: CliIo): ServeOptions {
  const serve = serveCommandOf(program);
  const warnings = applyServerConfig(serve, io.env);
  // One JSON object per line, as the server's own log (pino's fields): printed before the logger exists.
  for (const msg of warnings)
    io.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg })}\n`);
  return serveOptionsOf(serve.optsWithGlobals());
}

import { resolve } from 'node:path';
import { UsageError } from './exit-codes.ts';
import { isOutputFormat, OUTPUT_FORMATS, type OutputFormat } from './render/format.ts';
import type { FileConfig } from './config-file.ts';

export { configPath } from './config-paths.ts';
export { CONFIG_KEYS, loadConfig, type ConfigKey, type FileConfig } from './config-file.ts';

/** How to reach the agent: spawn one over stdio, or talk HTTP to a server. */
export type Connection =
  | { kind: 'local'; dataDir?: string; verbose: boolean }
  | {
      kind: 'server';
      url: string;
      token?: string;
      /** The token came from `agents login`'s credential store (under this server key). */
      stored?: string;
    };

/** What `agents login` stored: the current server and a token per server (credential-store.ts). */
export interface StoredLogins {
  current?: string;
  servers: Readonly<Record<string, { token: string }>>;
}

/** The global flags, as commander parsed them. */
export interface GlobalFlags {
  format?: string;
  color?: boolean;
  server?: string;
  local?: boolean;
  token?: string;
  tenant?: string;
  dataDir?: string;
  verbose?: boolean;
}

/** The output format: flag, then CLEVERAGENTS_FORMAT, then the config, then rich on a terminal and plain otherwise. */
export function resolveFormat(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  file: FileConfig,
  stdoutIsTTY: boolean,
): OutputFormat {
  const fromEnv = env['CLEVERAGENTS_FORMAT'];
  if (flag !== undefined) {
    if (!isOutputFormat(flag)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}`);
    return flag;
  }
  if (fromEnv) {
    if (!isOutputFormat(fromEnv))
      throw new UsageError(`CLEVERAGENTS_FORMAT must be one of ${OUTPUT_FORMATS.join(', ')}`);
    return fromEnv;
  }
  return file.format ?? (stdoutIsTTY ? 'rich' : 'plain');
}

/**
 * Local unless a server URL is given; for each setting the flag beats the environment beats the
 * config file beats what `agents login` stored (its current server; the token stored for the URL).
 */
export function resolveConnection(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  file: FileConfig,
  logins: StoredLogins = { servers: {} },
): Connection {
  if (flags.local && flags.server) throw new UsageError('--local and --server cannot be combined');
  const url = flags.local
    ? undefined
    : (flags.server ?? (env['CLEVERAGENTS_SERVER_URL'] || undefined) ?? file.server ?? logins.current);
  if (url === undefined || url === '') {
    const c: Connection = { kind: 'local', verbose: flags.verbose === true };
    if (flags.dataDir) c.dataDir = resolve(flags.dataDir);
    return c;
  }
  checkServerUrl(url);
  const token = flags.token ?? (env['CLEVERAGENTS_SERVER_TOKEN'] || undefined) ?? file.token;
  const c: Connection = { kind: 'server', url };
  if (token)
    c.token = checkToken(
      token,
      flags.token !== undefined
        ? '--token'
        : env['CLEVERAGENTS_SERVER_TOKEN']
          ? 'CLEVERAGENTS_SERVER_TOKEN'
          : 'config `token`',
    );
  else {
    const key = url.replace(/\/+$/, '');
    const stored = logins.servers[key]?.token;
    if (stored) {
      c.token = stored;
      c.stored = key;
    }
  }
  return c;
}

/**
 * A bearer token is sent as an HTTP header: one that holds a space, a line break or a character
 * outside printable ASCII (a pasted JSON answer, a key with its newline) cannot be, and would
 * surface as "cannot reach the server". Said here, naming where it came from.
 */
function checkToken(token: string, from: string): string {
  if (/^[\x21-\x7e]+$/.test(token)) return token;
  throw new UsageError(
    `the server token from ${from} is not a valid bearer token: it holds ${/\s/.test(token) ? 'a space or a line break' : 'a character outside printable ASCII'}`,
    'set it to the key alone (e.g. ca_…, as `agents user add` or `agents key create` printed it)',
  );
}

const NAMESPACE = /^[a-z][a-z0-9_-]{0,62}$/;

/** The namespace requests act in: --tenant, then CLEVERAGENTS_NAMESPACE, then the config; undefined: the caller's default. */
export function resolveNamespace(flags: GlobalFlags, env: NodeJS.ProcessEnv, file: FileConfig): string | undefined {
  const ns = flags.tenant ?? (env['CLEVERAGENTS_NAMESPACE'] || undefined) ?? file.namespace;
  if (ns === undefined || ns === '') return undefined;
  if (!NAMESPACE.test(ns))
    throw new UsageError(
      `the namespace ${JSON.stringify(ns.slice(0, 80))} is not a namespace name`,
      'use lowercase letters, digits, - and _, starting with a letter (see `agents namespace list`)',
    );
  return ns;
}

/** Refuses a server URL that is not an absolute http(s) URL. */
export function checkServerUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `the server URL ${JSON.stringify(url)} is not a URL`,
      'use e.g. --server http://127.0.0.1:8080',
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`the server URL must use http or https, not ${parsed.protocol}`);
}

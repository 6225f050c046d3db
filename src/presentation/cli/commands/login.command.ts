import { Option, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { whoami, messageOf } from '../../../protocol/client/index.ts';
import { checkServerUrl, configPath, loadConfig, type GlobalFlags } from '../config.ts';
import {
  credentialsPath,
  expiryMs,
  loadCredentials,
  saveCredentials,
  serverKey,
  type StoredCredential,
} from '../credential-store.ts';
import { UsageError } from '../exit-codes.ts';
import type { RunContext, Runner } from '../runner.ts';
import { deviceLogin } from '../support/device-flow.ts';
import { readHidden } from '../support/hidden-input.ts';

/** `agents login|logout`: a server's credentials, verified with whoami and stored (or forgotten). */
export function registerLogin(program: CliCommand, runner: Runner): void {
  program
    .command('login')
    .description(
      'Log in to a server: --server URL with an API key (--token, stdin, or a hidden prompt) or --device (OAuth); verified with whoami, stored, and made current',
    )
    .option('--device', "log in in a browser with the server's OIDC issuer (device flow)")
    .addOption(new Option('--client-id <id>', 'the OAuth client id for --device (default: from the Agent Card)'))
    .option('--scope <scopes>', 'OAuth scopes for --device')
    // Verifies the key (or the device-flow token) before storing it.
    .calls(whoami)
    .action((opts: LoginOptions, cmd: Command) =>
      runner.run(cmd, 'login', async (ctx) => {
        const flags = cmd.optsWithGlobals<GlobalFlags>();
        const env = ctx.io.env;
        const url = flags.server ?? (env['CLEVERAGENTS_SERVER_URL'] || undefined) ?? loadConfig(configPath(env)).server;
        if (!url)
          throw new UsageError(
            'which server? pass --server URL',
            'e.g. agents login --server https://agents.example.com',
          );
        checkServerUrl(url);
        const key = serverKey(url);
        const cred = await loginCredential(ctx, key, flags, opts);
        const client = await ctx.connectTo(key, cred.token);
        const me = await client.call(whoami, {}, { signal: ctx.signal });
        const file = credentialsPath(env);
        const store = loadCredentials(file);
        store.servers[key] = { ...cred, user: me.user };
        store.current = key;
        saveCredentials(file, store);
        ctx.ui.done(`logged in to ${key} as ${me.user}${me.admin ? ' (administrator)' : ''}; stored in ${file}`);
        return { data: { server: key, user: me.user, admin: me.admin, kind: cred.kind, file } };
      }),
    );
  program
    .command('logout')
    .description('Forget the stored login for --server URL (default: the current one)')
    .action((_opts: unknown, cmd: Command) =>
      runner.run(cmd, 'logout', (ctx) => {
        const flags = cmd.optsWithGlobals<GlobalFlags>();
        const file = credentialsPath(ctx.io.env);
        const store = loadCredentials(file);
        const key = flags.server !== undefined ? serverKey(flags.server) : store.current;
        if (key === undefined || !store.servers[key]) {
          ctx.ui.done(key === undefined ? 'not logged in' : `not logged in to ${key}`);
          return Promise.resolve({ data: { loggedOut: false } });
        }
        delete store.servers[key];
        if (store.current === key) delete store.current;
        saveCredentials(file, store);
        ctx.ui.done(`logged out of ${key}`);
        return Promise.resolve({ data: { loggedOut: true, server: key } });
      }),
    );
}

interface LoginOptions {
  device?: boolean;
  clientId?: string;
  scope?: string;
}

/** What `agents login` stores: an OAuth token from the device flow, or an API key (flag, stdin or prompt). */
async function loginCredential(
  ctx: RunContext,
  key: string,
  flags: GlobalFlags,
  opts: LoginOptions,
): Promise<Omit<StoredCredential, 'user'>> {
  if (opts.device) {
    if (flags.token !== undefined) throw new UsageError('--device and --token cannot be combined');
    const card = await fetchCard(key, ctx.signal);
    const r = await deviceLogin({
      card,
      ...(opts.clientId !== undefined ? { clientId: opts.clientId } : {}),
      ...(opts.scope !== undefined ? { scope: opts.scope } : {}),
      print: (line) => ctx.ui.err(line),
      signal: ctx.signal,
    });
    return {
      kind: 'oauth',
      token: r.accessToken,
      tokenUrl: r.tokenUrl,
      clientId: r.clientId,
      ...(r.refreshToken !== undefined ? { refreshToken: r.refreshToken } : {}),
      ...(r.expiresAt !== undefined ? { expiresAt: expiryMs(r.expiresAt) } : {}),
    };
  }
  const token = (
    flags.token ??
    (await readHidden(ctx.io, ctx.signal, {
      prompt: 'API key: ',
      pipe: 'line',
      maxBytes: 64 * 1024,
      what: 'the key',
    }))
  ).trim();
  if (token === '') throw new UsageError('no key given', 'pass --token KEY, pipe it on stdin, or type it when asked');
  return { kind: 'key', token };
}

async function fetchCard(base: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(`${base}/.well-known/agent-card.json`, { signal });
  } catch (err) {
    throw new UsageError(`cannot reach ${base}: ${messageOf(err)}`, 'check the server URL');
  }
  if (!res.ok) throw new UsageError(`${base} has no Agent Card (HTTP ${res.status})`, 'check the server URL');
  return (await res.json()) as Record<string, unknown>;
}

import { Option, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import type { z } from 'zod';
import {
  syncConnect,
  syncConnection,
  syncDisconnect,
  syncPull,
  syncPush,
  syncStatus,
  type SyncResult,
} from '../../../protocol/client/index.ts';
import { credentialsPath, loadCredentials, serverKey } from '../credential-store.ts';
import { UsageError } from '../exit-codes.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { Ui } from '../render/ui.ts';
import type { Runner } from '../runner.ts';
import { collect } from './session.command.ts';
import { registerServerAdmin, type ServerMaintenance } from './server-admin.command.ts';

// Sync runs in the local agent, which talks to the server: these commands never go to a server directly.
const LOCAL = { local: true } as const;

const seconds = (v: string): number => {
  if (!/^\d+$/.test(v)) throw new UsageError(`--auto-pull-seconds must be a whole number of seconds (got ${v})`);
  return Number(v);
};

/**
 * The key `agents login` stored for this server, if any: `credentials.json` next to config.yaml,
 * `{servers: {[url]: {token}}}` (the accounts branch's credentials.ts writes it; at merge this can
 * become `loadCredentials(credentialsPath(env)).servers[serverKey(url)]?.token`). Unreadable: none.
 */
function storedToken(env: NodeJS.ProcessEnv, url: string): string | undefined {
  try {
    const token = loadCredentials(credentialsPath(env)).servers[serverKey(url)]?.token;
    return token !== undefined && token !== '' ? token : undefined;
  } catch {
    return undefined;
  }
}

/** `--map name=/path` flags as a record; a malformed one is a usage error. */
function parseMaps(maps: readonly string[] | undefined): Record<string, string> | undefined {
  if (!maps || maps.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const m of maps) {
    const i = m.indexOf('=');
    if (i <= 0 || i === m.length - 1)
      throw new UsageError(
        `--map takes NAME=PATH (got ${JSON.stringify(m.slice(0, 80))})`,
        'e.g. --map team/repo=/home/me/src/repo',
      );
    out[m.slice(0, i)] = m.slice(i + 1);
  }
  return out;
}

/** `agents sync status|pull|push`: the local store against the server `agents server connect` named. */
export function registerSync(program: CliCommand, runner: Runner): void {
  const sync = program
    .command('sync')
    .description('Sync shared registry definitions between this machine and the connected server (never local/)');
  registerSyncStatus(sync, runner);
  registerSyncPull(sync, runner);
  registerSyncPush(sync, runner);
}

function registerSyncStatus(sync: CliCommand, runner: Runner): void {
  sync
    .command('status')
    .description('What is ahead, behind, in conflict, or only on one side')
    .option('--namespace <name>', 'only this namespace (repeat for several)', collect)
    // Sync runs in the local agent (which talks to the server): these always use the local agent.
    .calls(syncStatus)
    .action((opts: { namespace?: string[] }, cmd: Command) =>
      runner.run(
        cmd,
        'sync status',
        async (ctx) => {
          const client = await ctx.client();
          const r = await client.call(syncStatus, { namespaces: opts.namespace }, { signal: ctx.signal });
          const { ui } = ctx;
          ui.info(
            `${r.connection.url} as ${r.connection.user}; namespaces: ${
              r.namespaces.map((n) => `${n.name} (${n.role})`).join(', ') || 'none'
            }`,
          );
          if (r.entities.length === 0) ui.info('nothing to sync');
          else
            ui.out(
              renderTable(
                r.entities,
                [
                  { header: 'KIND', value: (e) => e.kind },
                  { header: 'NAME', value: (e) => e.name, style: (s) => ui.pal.bold(s) },
                  { header: 'STATE', value: (e) => e.state },
                  { header: 'LOCAL', value: (e) => (e.localRevision === undefined ? '-' : String(e.localRevision)) },
                  { header: 'SERVER', value: (e) => (e.serverRevision === undefined ? '-' : String(e.serverRevision)) },
                  { header: 'BASE', value: (e) => (e.baseRevision === undefined ? '-' : String(e.baseRevision)) },
                ],
                ui.mode,
              ),
            );
          return { data: r };
        },
        LOCAL,
      ),
    );
}

function registerSyncPull(sync: CliCommand, runner: Runner): void {
  sync
    .command('pull')
    .description("Write the server's newer definitions here (conflicts refused unless --force)")
    .option('--namespace <name>', 'only this namespace (repeat for several)', collect)
    .option('--force', 'overwrite local changes that conflict (reports what it overwrote)')
    .option('--dry-run', 'say what would be written, write nothing')
    .option('--map <name=path>', "a resource's directory on this machine (repeatable; remembered)", collect)
    .calls(syncPull)
    .action((opts: { namespace?: string[]; force?: boolean; dryRun?: boolean; map?: string[] }, cmd: Command) =>
      runner.run(
        cmd,
        'sync pull',
        async (ctx) => {
          const map = parseMaps(opts.map);
          const client = await ctx.client();
          const r = await client.call(
            syncPull,
            { namespaces: opts.namespace, force: opts.force, dryRun: opts.dryRun, map },
            { signal: ctx.signal },
          );
          renderResult(ctx.ui, r, 'pulled', 'local');
          return { data: r, exit: r.failed.length > 0 ? 'INVALID_STATE' : undefined };
        },
        LOCAL,
      ),
    );
}

function registerSyncPush(sync: CliCommand, runner: Runner): void {
  sync
    .command('push')
    .description('Write what changed here to the server where your role allows (conflicts refused unless --force)')
    .option('--namespace <name>', 'only this namespace (repeat for several; never local)', collect)
    .option('--force', 'overwrite server changes that conflict (reports what it overwrote)')
    .option('--dry-run', 'say what would be written, write nothing')
    .calls(syncPush)
    .action((opts: { namespace?: string[]; force?: boolean; dryRun?: boolean }, cmd: Command) =>
      runner.run(
        cmd,
        'sync push',
        async (ctx) => {
          const client = await ctx.client();
          const r = await client.call(
            syncPush,
            { namespaces: opts.namespace, force: opts.force, dryRun: opts.dryRun },
            { signal: ctx.signal },
          );
          renderResult(ctx.ui, r, 'pushed', 'server');
          return { data: r, exit: r.failed.length > 0 ? 'INVALID_STATE' : undefined };
        },
        LOCAL,
      ),
    );
}

/** `agents server connect|disconnect|status`: the server this local setup syncs with. */
export function registerServer(
  program: CliCommand,
  runner: Runner,
  maintenance?: () => Promise<ServerMaintenance>,
): void {
  const server = program
    .command('server')
    .description(
      "The server this machine syncs with (agents sync …), and a server's database: migrate, backup, restore",
    );
  registerServerConnect(server, runner);
  registerServerDisconnect(server, runner);
  registerServerStatus(server, runner);
  registerServerAdmin(server, runner, maintenance);
}

function registerServerConnect(server: CliCommand, runner: Runner): void {
  server
    .command('connect')
    .description('Connect this local setup to a server (checked by asking it who you are)')
    .argument('<url>', 'the server, e.g. https://agents.example.com')
    .option('--token <key>', 'your API key there (else CLEVERAGENTS_SERVER_TOKEN, else the key `agents login` stored)')
    .option('--namespace <name>', 'sync only this namespace (default: every one you belong to there)')
    .addOption(
      new Option('--auto-pull-seconds <s>', 'pull every so many seconds while the local agent runs (0: off)')
        .default(300)
        .argParser(seconds),
    )
    .calls(syncConnect)
    .action((url: string, opts: { token?: string; namespace?: string; autoPullSeconds: number }, cmd: Command) =>
      runner.run(
        cmd,
        'server connect',
        async (ctx) => {
          const token =
            cmd.optsWithGlobals<{ token?: string }>().token ??
            opts.token ??
            (ctx.io.env['CLEVERAGENTS_SERVER_TOKEN'] || undefined) ??
            storedToken(ctx.io.env, url);
          if (!token)
            throw new UsageError(
              'a token is required to connect',
              'pass --token KEY, set CLEVERAGENTS_SERVER_TOKEN, or log in first (`agents login --server URL`)',
            );
          const client = await ctx.client();
          const r = await client.call(
            syncConnect,
            { url, token, namespace: opts.namespace, autoPullSeconds: opts.autoPullSeconds },
            { signal: ctx.signal },
          );
          const { ui } = ctx;
          ui.out(
            renderFields(
              [
                ['server', r.url],
                ['user', r.user],
                ['namespaces', r.namespaces.map((n) => `${n.name} (${n.role})`).join(', ') || 'none'],
                ['auto-pull', r.autoPullSeconds > 0 ? `every ${r.autoPullSeconds}s` : 'off'],
              ],
              ui.mode,
            ),
          );
          ui.info('next: agents sync status');
          return { data: r };
        },
        LOCAL,
      ),
    );
}

function registerServerDisconnect(server: CliCommand, runner: Runner): void {
  server
    .command('disconnect')
    .description('Forget the server (what was pulled stays here)')
    .calls(syncDisconnect)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(
        cmd,
        'server disconnect',
        async (ctx) => {
          const client = await ctx.client();
          const r = await client.call(syncDisconnect, {}, { signal: ctx.signal });
          ctx.ui.info(r.disconnected ? `disconnected from ${r.url ?? 'the server'}` : 'not connected to a server');
          return { data: r };
        },
        LOCAL,
      ),
    );
}

function registerServerStatus(server: CliCommand, runner: Runner): void {
  server
    .command('status')
    .description('The server this machine syncs with, without asking it')
    .calls(syncConnection)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(
        cmd,
        'server status',
        async (ctx) => {
          const client = await ctx.client();
          const r = await client.call(syncConnection, {}, { signal: ctx.signal });
          const { ui } = ctx;
          if (!r.connected) ui.info('not connected: agents server connect URL --token KEY');
          else
            ui.out(
              renderFields(
                [
                  ['server', r.url],
                  ['user', r.user],
                  ['namespace', r.namespace ?? 'all of yours'],
                  ['auto-pull', r.autoPullSeconds ? `every ${r.autoPullSeconds}s` : 'off'],
                  ['last pull', r.lastPullAt ?? 'never'],
                  ...Object.entries(r.paths ?? {}).map(([name, path]) => [`path of ${name}`, path] as const),
                ],
                ui.mode,
              ),
            );
          return { data: r };
        },
        LOCAL,
      ),
    );
}

function renderResult(ui: Ui, r: z.output<typeof SyncResult>, verb: string, overwrittenSide: string): void {
  const would = r.dryRun ? 'would be ' : '';
  for (const w of r.written)
    ui.out(
      `${r.dryRun ? 'would write' : w.action} ${w.kind} ${w.name}${w.revision ? ` (server revision ${w.revision})` : ''}`,
    );
  for (const o of r.overwritten)
    ui.warn(
      `${would}overwrote the ${overwrittenSide} ${o.kind} ${o.name} (local revision ${o.localRevision ?? '-'}, server revision ${
        o.serverRevision ?? '-'
      })`,
    );
  for (const s of r.skipped) ui.warn(`skipped ${s.kind} ${s.name}: ${s.reason}${s.hint ? ` — ${s.hint}` : ''}`);
  for (const f of r.failed) ui.warn(`failed ${f.kind} ${f.name}: ${f.message}`);
  if (r.written.length === 0 && r.skipped.length === 0 && r.failed.length === 0) ui.info(`nothing to be ${verb}`);
}

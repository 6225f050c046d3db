import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  auditList,
  keyCreate,
  keyList,
  keyRevoke,
  userAdd,
  userDisable,
  userEnable,
  userList,
  whoami,
} from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { whenText } from '../render/definition.render.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { RunContext, Runner } from '../runner.ts';
import { intOption } from '../support/options.ts';
import { registerLogin } from './login.command.ts';

/** `agents whoami|key|user|audit|login|logout`: accounts, API keys and the audit log (server mode). */
export function registerAccount(program: CliCommand, runner: Runner): void {
  program
    .command('whoami')
    .description('Show who you are: your user, how you authenticated, and your namespaces with your role')
    .calls(whoami)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(cmd, 'whoami', async (ctx) => {
        const client = await ctx.client();
        const me = await client.call(whoami, {}, { signal: ctx.signal });
        const { ui } = ctx;
        ui.out(
          renderFields(
            [
              ['user', me.user],
              ['name', me.displayName],
              ['admin', ui.rich ? (me.admin ? 'yes' : undefined) : String(me.admin)],
              ['via', me.kind],
              ['credential', me.credential],
              ['default', me.defaultNamespace],
              ['acting in', me.namespace],
              ['namespaces', me.namespaces.map((n) => `${n.name} (${n.role})`).join(', ')],
            ],
            ui.mode,
          ),
        );
        return { data: me };
      }),
    );

  registerKey(program, runner);
  registerUser(program, runner);
  registerAudit(program, runner);
  registerLogin(program, runner);
}

function registerKey(program: CliCommand, runner: Runner): void {
  const key = program.command('key').description('API keys: make, list and revoke them (server mode)');
  registerKeyCreate(key, runner);
  registerKeyList(key, runner);
  registerKeyRevoke(key, runner);
}

function registerKeyCreate(key: CliCommand, runner: Runner): void {
  key
    .command('create')
    .description('Make an API key (shown once); administrators may make one for another user')
    .argument('<name>', 'what the key is for, e.g. ci or laptop')
    .option('--expires-in-days <n>', 'the key stops working after this many days', intOption(1, 3650))
    .option('--expires-at <instant>', 'the key stops working at this ISO 8601 instant')
    .option('--user <name>', "another user's key (server administrators)")
    .calls(keyCreate)
    .action((name: string, opts: { expiresInDays?: number; expiresAt?: string; user?: string }, cmd: Command) =>
      runner.run(cmd, 'key create', async (ctx) => {
        if (opts.expiresInDays !== undefined && opts.expiresAt !== undefined)
          throw new UsageError('--expires-in-days and --expires-at cannot be combined');
        const client = await ctx.client();
        const k = await client.call(
          keyCreate,
          {
            name,
            ...(opts.expiresInDays !== undefined ? { expiresInDays: opts.expiresInDays } : {}),
            ...(opts.expiresAt !== undefined ? { expiresAt: opts.expiresAt } : {}),
            ...(opts.user !== undefined ? { user: opts.user } : {}),
          },
          { signal: ctx.signal },
        );
        showNewKey(ctx, k);
        return { data: k };
      }),
    );
}

function registerKeyList(key: CliCommand, runner: Runner): void {
  key
    .command('list')
    .description('List your API keys (administrators: --user for another user); never their secrets')
    .option('--user <name>', "another user's keys (server administrators)")
    .calls(keyList)
    .action((opts: { user?: string }, cmd: Command) =>
      runner.run(cmd, 'key list', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(keyList, opts.user !== undefined ? { user: opts.user } : {}, {
          signal: ctx.signal,
        });
        const { ui } = ctx;
        if (r.keys.length === 0) ui.info('no API keys');
        else
          ui.out(
            renderTable(
              r.keys,
              [
                { header: 'ID', value: (k) => k.id, style: (s) => ui.pal.bold(s) },
                { header: 'NAME', value: (k) => k.name },
                { header: 'USER', value: (k) => k.user },
                { header: 'CREATED', value: (k) => whenText(k.createdAt, ui.rich) },
                { header: 'EXPIRES', value: (k) => (k.expiresAt ? whenText(k.expiresAt, ui.rich) : '-') },
                { header: 'LAST USED', value: (k) => (k.lastUsedAt ? whenText(k.lastUsedAt, ui.rich) : '-') },
                { header: 'STATE', value: (k) => keyState(k) },
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

function registerKeyRevoke(key: CliCommand, runner: Runner): void {
  key
    .command('revoke')
    .description('Revoke an API key: it is refused from the next request on')
    .argument('<id>', 'the key id, as `agents key list` prints it (ca_…)')
    .calls(keyRevoke)
    .action((id: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'key revoke', async (ctx) => {
        const client = await ctx.client();
        const k = await client.call(keyRevoke, { id }, { signal: ctx.signal });
        ctx.ui.info(`revoked ${k.id} (${k.name}, of ${k.user})`);
        return { data: k };
      }),
    );
}

function keyState(k: { revokedAt?: string | undefined; expiresAt?: string | undefined }): string {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}

function showNewKey(
  ctx: RunContext,
  k: { id: string; key: string; name: string; user: string; expiresAt?: string | undefined },
): void {
  const { ui } = ctx;
  ui.out(
    renderFields(
      [
        ['id', k.id],
        ['name', k.name],
        ['user', k.user],
        ['expires', k.expiresAt],
        ['key', k.key],
      ],
      ui.mode,
    ),
  );
  ui.info('the key is shown this once: store it now (e.g. `agents login --server URL`)');
}

function registerUser(program: CliCommand, runner: Runner): void {
  const user = program.command('user').description('Users of a server (server administrators)');
  registerUserAdd(user, runner);
  registerUserList(user, runner);
  registerUserToggle(user, runner);
}

function registerUserAdd(user: CliCommand, runner: Runner): void {
  user
    .command('add')
    .description('Add a user: their own namespace is made with them, and a first API key (shown once)')
    .argument('<name>', 'the user name: lowercase letters, digits, - and _')
    .option('--display-name <text>', 'a display name')
    .option('--admin', 'make the user a server administrator')
    .calls(userAdd)
    .action((name: string, opts: { displayName?: string; admin?: boolean }, cmd: Command) =>
      runner.run(cmd, 'user add', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(
          userAdd,
          {
            name,
            ...(opts.displayName !== undefined ? { displayName: opts.displayName } : {}),
            ...(opts.admin ? { admin: true } : {}),
          },
          { signal: ctx.signal },
        );
        ctx.ui.info(
          `added user ${r.user.name} (namespace ${r.user.defaultNamespace}/)${r.user.admin ? ', an administrator' : ''}`,
        );
        showNewKey(ctx, r.key);
        return { data: r };
      }),
    );
}

function registerUserList(user: CliCommand, runner: Runner): void {
  user
    .command('list')
    .description('List the users of the server')
    .calls(userList)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(cmd, 'user list', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(userList, {}, { signal: ctx.signal });
        const { ui } = ctx;
        ui.out(
          renderTable(
            r.users,
            [
              { header: 'NAME', value: (u) => u.name, style: (s) => ui.pal.bold(s) },
              { header: 'DISPLAY NAME', value: (u) => u.displayName ?? '-' },
              { header: 'ADMIN', value: (u) => (u.admin ? 'yes' : 'no') },
              { header: 'NAMESPACE', value: (u) => u.defaultNamespace },
              { header: 'STATE', value: (u) => (u.disabledAt ? 'disabled' : 'active') },
              { header: 'CREATED', value: (u) => whenText(u.createdAt, ui.rich) },
            ],
            ui.mode,
          ),
        );
        return { data: r };
      }),
    );
}

function registerUserToggle(user: CliCommand, runner: Runner): void {
  for (const [verb, contract, done] of [
    ['disable', userDisable, 'disabled'],
    ['enable', userEnable, 'enabled'],
  ] as const)
    user
      .command(verb)
      .description(
        verb === 'disable'
          ? "Disable a user: every one of the user's keys and tokens is refused from the next request on"
          : 'Enable a disabled user again',
      )
      .argument('<name>', 'the user')
      .calls(contract)
      .action((name: string, _opts: unknown, cmd: Command) =>
        runner.run(cmd, `user ${verb}`, async (ctx) => {
          const client = await ctx.client();
          const u = await client.call(contract, { name }, { signal: ctx.signal });
          ctx.ui.info(`${done} user ${u.name}`);
          return { data: u };
        }),
      );
}

function registerAudit(program: CliCommand, runner: Runner): void {
  const audit = program.command('audit').description('The audit log (server administrators)');
  audit
    .command('list')
    .description(
      'List audit events, newest first: logins, refusals, users, keys, members, plan applies, registry changes',
    )
    .option('--event <kind>', 'only this event, e.g. auth.refused, plan.applied, definition.removed')
    .option('--principal <user>', "only this user's events")
    .option('--namespace <name>', 'only events in this namespace')
    .option('--since <instant>', 'only events at or after this ISO 8601 instant')
    .option('--before <id>', 'events older than this id (the next page, as printed)')
    .option('--limit <n>', 'at most this many events (default 100)', intOption(1, 1000))
    .calls(auditList)
    .action(
      (
        opts: {
          event?: string;
          principal?: string;
          namespace?: string;
          since?: string;
          before?: string;
          limit?: number;
        },
        cmd: Command,
      ) =>
        runner.run(cmd, 'audit list', async (ctx) => {
          const client = await ctx.client();
          const params = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
          const r = await client.call(auditList, params, { signal: ctx.signal });
          const { ui } = ctx;
          if (r.events.length === 0) ui.info('no audit events');
          else
            ui.out(
              renderTable(
                r.events,
                [
                  { header: 'AT', value: (e) => whenText(e.at, ui.rich) },
                  { header: 'EVENT', value: (e) => e.event, style: (s) => ui.pal.bold(s) },
                  { header: 'OUTCOME', value: (e) => e.outcome },
                  { header: 'PRINCIPAL', value: (e) => e.principal ?? '-' },
                  { header: 'TARGET', value: (e) => e.target ?? '-' },
                  { header: 'NAMESPACE', value: (e) => e.namespace ?? '-' },
                  { header: 'CLIENT', value: (e) => e.client ?? '-' },
                  {
                    header: 'DETAILS',
                    value: (e) => (e.details ? JSON.stringify(e.details).slice(0, 120) : '-'),
                  },
                ],
                ui.mode,
              ),
            );
          if (r.next) ui.info(`more: agents audit list --before ${r.next}`);
          return { data: r };
        }),
    );
}

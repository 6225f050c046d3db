import { InvalidArgumentError, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import {
  namespaceAddMember,
  namespaceCreate,
  namespaceDelete,
  namespaceList,
  namespaceMembers,
  namespaceRemoveMember,
  namespaceSetRole,
  namespaceShow,
} from '../../../protocol/client/index.ts';
import { whenText } from '../render/definition.render.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { Runner } from '../runner.ts';
import { registerNamespaceGrants } from './namespace-grants.command.ts';
import { registerNamespaceLimits } from './namespace-limits.command.ts';

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
type Role = (typeof ROLES)[number];

function roleArg(value: string): Role {
  if ((ROLES as readonly string[]).includes(value)) return value as Role;
  throw new InvalidArgumentError(`must be a role: ${ROLES.join(', ')}`);
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/**
 * `agents namespace list|show|members|create|delete|add-member|remove-member|set-role` (and
 * `grants|grant|revoke`, namespace-grants.command.ts; `limits`, namespace-limits.command.ts): where
 * entities live, who may change them, and what each user may use there.
 */
export function registerNamespace(program: CliCommand, runner: Runner): void {
  const ns = program
    .command('namespace')
    .description('Namespaces: where registry entities live, and who may change them');
  registerNamespaceList(ns, runner);
  registerNamespaceShow(ns, runner);
  registerNamespaceMembers(ns, runner);
  registerNamespaceCreate(ns, runner);
  registerNamespaceDelete(ns, runner);
  registerNamespaceAddMember(ns, runner);
  registerNamespaceRemoveMember(ns, runner);
  registerNamespaceSetRole(ns, runner);
  registerNamespaceGrants(ns, runner);
  registerNamespaceLimits(ns, runner);
}

function registerNamespaceList(ns: CliCommand, runner: Runner): void {
  ns.command('list')
    .description('List the namespaces you belong to (and builtin), with your role')
    .calls(namespaceList)
    .action((_opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace list', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(namespaceList, {}, { signal: ctx.signal });
        const { ui } = ctx;
        ui.out(
          renderTable(
            r.namespaces,
            [
              { header: 'NAME', value: (n) => n.name, style: (s) => ui.pal.bold(s) },
              { header: 'ROLE', value: (n) => n.role },
              { header: 'OWNER', value: (n) => n.owner },
              { header: 'CREATED', value: (n) => whenText(n.createdAt, ui.rich) },
            ],
            ui.mode,
          ),
        );
        return { data: r };
      }),
    );
}

function registerNamespaceShow(ns: CliCommand, runner: Runner): void {
  ns.command('show')
    .description('Show a namespace: owner, your role, members and entity counts')
    .argument('<name>', 'the namespace (local, builtin, …)')
    .calls(namespaceShow)
    .action((name: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace show', async (ctx) => {
        const client = await ctx.client();
        const n = await client.call(namespaceShow, { name }, { signal: ctx.signal });
        const { ui } = ctx;
        const fields = [
          ['owner', n.owner],
          ['role', n.role],
          ['created', whenText(n.createdAt, ui.rich)],
          ['builtin', ui.rich ? (n.builtin ? 'yes' : undefined) : String(n.builtin)],
          ['members', String(n.memberCount)],
          ...Object.entries(n.entities).map(([kind, count]) => [`${kind}s`, String(count)] as const),
        ] as const;
        ui.out(
          ui.rich
            ? `${ui.pal.bold('Namespace')} ${n.name}\n${renderFields(fields, ui.mode)}`
            : renderFields([['name', n.name], ...fields], ui.mode),
        );
        return { data: n };
      }),
    );
}

function registerNamespaceMembers(ns: CliCommand, runner: Runner): void {
  ns.command('members')
    .description("List a namespace's members and their roles")
    .argument('<name>', 'the namespace')
    .calls(namespaceMembers)
    .action((name: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace members', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(namespaceMembers, { name }, { signal: ctx.signal });
        const { ui } = ctx;
        if (r.members.length === 0)
          ui.info(
            `${r.namespace} has no members${r.namespace === 'builtin' ? ' (everyone may read it; no one changes it)' : ''}`,
          );
        else
          ui.out(
            renderTable(
              r.members,
              [
                { header: 'PRINCIPAL', value: (m) => m.principal },
                { header: 'ROLE', value: (m) => m.role },
                { header: 'ADDED', value: (m) => whenText(m.addedAt, ui.rich) },
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

function registerNamespaceCreate(ns: CliCommand, runner: Runner): void {
  ns.command('create')
    .description('Create a namespace; you become its owner')
    .argument('<name>', 'the namespace: lowercase letters, digits, - and _, starting with a letter')
    .calls(namespaceCreate)
    .action((name: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace create', async (ctx) => {
        const client = await ctx.client();
        const n = await client.call(namespaceCreate, { name }, { signal: ctx.signal });
        const { ui } = ctx;
        if (ui.rich) {
          ui.out(`Created namespace ${n.name} (you are its owner)\n`);
          ui.info(`add entities as ${n.name}/<name>, e.g. agents actor add ${n.name}/reviewer …`);
        } else
          ui.out(
            renderFields(
              [
                ['name', n.name],
                ['owner', n.owner],
                ['role', n.role],
                ['created', n.createdAt],
              ],
              ui.mode,
            ),
          );
        return { data: n };
      }),
    );
}

function registerNamespaceDelete(ns: CliCommand, runner: Runner): void {
  ns.command('delete')
    .description(
      'Delete a namespace you own (refused while it holds registry entities, sessions, tasks or plans, unless --force)',
    )
    .argument('<name>', 'the namespace')
    .option('--force', 'also delete everything in it: registry entities, sessions with their tasks, plans')
    .calls(namespaceDelete)
    .action((name: string, opts: { force?: boolean }, cmd: Command) =>
      runner.run(cmd, 'namespace delete', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(
          namespaceDelete,
          { name, ...(opts.force ? { force: true } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        const { entities, sessions, tasks, plans } = r.removed;
        const removed = [
          entities && plural(entities, 'registry entity').replace('entitys', 'entities'),
          sessions && plural(sessions, 'session'),
          tasks && plural(tasks, 'task'),
          plans && plural(plans, 'plan'),
        ].filter((x): x is string => typeof x === 'string');
        if (ui.rich) ui.out(`Deleted namespace ${r.name}${removed.length ? ` with ${removed.join(', ')}` : ''}\n`);
        else
          ui.out(
            renderFields(
              [
                ['name', r.name],
                ['deleted', 'yes'],
                ['entities', String(entities)],
                ['sessions', String(sessions)],
                ['tasks', String(tasks)],
                ['plans', String(plans)],
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

function registerNamespaceAddMember(ns: CliCommand, runner: Runner): void {
  ns.command('add-member')
    .description('Add a user to a namespace with a role (only an owner grants owner)')
    .argument('<namespace>', 'the namespace')
    .argument('<user>', 'the user')
    .requiredOption('--role <role>', `the role: ${ROLES.join(', ')}`, roleArg)
    .calls(namespaceAddMember)
    .action((namespace: string, user: string, opts: { role: Role }, cmd: Command) =>
      runner.run(cmd, 'namespace add-member', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(namespaceAddMember, { namespace, user, role: opts.role }, { signal: ctx.signal });
        membershipOut(ctx.ui, r, `Added ${r.user} to ${r.namespace} as ${r.role ?? opts.role}`);
        return { data: r };
      }),
    );
}

function registerNamespaceRemoveMember(ns: CliCommand, runner: Runner): void {
  ns.command('remove-member')
    .description('Remove a member from a namespace (never its last owner)')
    .argument('<namespace>', 'the namespace')
    .argument('<user>', 'the member')
    .calls(namespaceRemoveMember)
    .action((namespace: string, user: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace remove-member', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(namespaceRemoveMember, { namespace, user }, { signal: ctx.signal });
        membershipOut(ctx.ui, r, `Removed ${r.user} from ${r.namespace} (was ${r.previous ?? 'a member'})`);
        return { data: r };
      }),
    );
}

function registerNamespaceSetRole(ns: CliCommand, runner: Runner): void {
  ns.command('set-role')
    .description("Change a member's role (only an owner grants or takes away owner; the last owner stays one)")
    .argument('<namespace>', 'the namespace')
    .argument('<user>', 'the member')
    .argument('<role>', `the new role: ${ROLES.join(', ')}`, roleArg)
    .calls(namespaceSetRole)
    .action((namespace: string, user: string, role: Role, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace set-role', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(namespaceSetRole, { namespace, user, role }, { signal: ctx.signal });
        membershipOut(
          ctx.ui,
          r,
          r.previous === r.role
            ? `${r.user} already has role ${role} in ${r.namespace}`
            : `${r.user} is now ${role} in ${r.namespace} (was ${r.previous ?? 'none'})`,
        );
        return { data: r };
      }),
    );
}

type Ui = Parameters<Parameters<Runner['run']>[2]>[0]['ui'];

function membershipOut(
  ui: Ui,
  r: { namespace: string; user: string; role?: string | undefined; previous?: string | undefined },
  sentence: string,
): void {
  if (ui.rich) ui.out(`${sentence}\n`);
  else
    ui.out(
      renderFields(
        [
          ['namespace', r.namespace],
          ['user', r.user],
          ['role', r.role],
          ['previous', r.previous],
        ],
        ui.mode,
      ),
    );
}

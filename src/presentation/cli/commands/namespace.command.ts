import type { Command } from 'commander';
import { namespaceList, namespaceMembers, namespaceShow } from '../../../protocol/client/index.js';
import { whenText } from '../render/definition.js';
import { renderFields, renderTable } from '../render/table.js';
import type { Runner } from '../runner.js';

/** `agents namespace list|show|members`: where entities live and who may change them. */
export function registerNamespace(program: Command, runner: Runner): void {
  const ns = program
    .command('namespace')
    .description('Namespaces: where registry entities live, and who may change them');

  ns.command('list')
    .description('List the namespaces you belong to (and builtin), with your role')
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

  ns.command('show')
    .description('Show a namespace: owner, your role, members and entity counts')
    .argument('<name>', 'the namespace (local, builtin, …)')
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

  ns.command('members')
    .description("List a namespace's members and their roles")
    .argument('<name>', 'the namespace')
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

import { InvalidArgumentError, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { namespaceGrant, namespaceGrants, namespaceRevoke } from '../../../protocol/client/index.ts';
import { whenText } from '../render/definition.render.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { Runner } from '../runner.ts';

const CAPABILITIES = ['runs-program', 'host-path', 'server-secret', 'private-network'] as const;
type Capability = (typeof CAPABILITIES)[number];

function capabilityArg(value: string): Capability {
  if ((CAPABILITIES as readonly string[]).includes(value)) return value as Capability;
  throw new InvalidArgumentError(`must be a capability: ${CAPABILITIES.join(', ')}`);
}

/**
 * `agents namespace grants|grant|revoke`: what a namespace's definitions may make a server do
 * (run programs, open host paths, read its secrets, reach private addresses). Administrators grant.
 */
export function registerNamespaceGrants(ns: CliCommand, runner: Runner): void {
  registerGrantsGrants(ns, runner);
  registerGrantsGrant(ns, runner);
  registerGrantsRevoke(ns, runner);
}

function registerGrantsGrants(ns: CliCommand, runner: Runner): void {
  ns.command('grants')
    .description('List the capabilities a namespace holds (what its definitions may make the server do)')
    .argument('<namespace>', 'the namespace')
    .calls(namespaceGrants)
    .action((namespace: string, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace grants', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(namespaceGrants, { namespace }, { signal: ctx.signal });
        const { ui } = ctx;
        if (r.grants.length === 0)
          ui.info(
            `${r.namespace} holds no capability: its definitions may not run programs, name host paths outside its workspace, read the server's secrets or reach private addresses (a server administrator grants them: agents namespace grant ${r.namespace} <capability>)`,
          );
        else
          ui.out(
            renderTable(
              r.grants,
              [
                { header: 'CAPABILITY', value: (g) => g.capability, style: (s) => ui.pal.bold(s) },
                {
                  header: 'PATHS',
                  value: (g) => (g.paths ? g.paths.join(', ') : g.capability === 'host-path' ? 'any' : ''),
                },
                { header: 'BY', value: (g) => g.grantedBy },
                { header: 'SINCE', value: (g) => whenText(g.grantedAt, ui.rich) },
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

function registerGrantsGrant(ns: CliCommand, runner: Runner): void {
  ns.command('grant')
    .description('Grant a namespace a capability (server administrators; audited)')
    .argument('<namespace>', 'the namespace')
    .argument('<capability>', `one of ${CAPABILITIES.join(', ')}`, capabilityArg)
    .option('--paths <dirs...>', 'host-path only: the host directories its definitions may name (default: any)')
    .calls(namespaceGrant)
    .action((namespace: string, capability: Capability, opts: { paths?: string[] }, cmd: Command) =>
      runner.run(cmd, 'namespace grant', async (ctx) => {
        const client = await ctx.client();
        const g = await client.call(
          namespaceGrant,
          { namespace, capability, ...(opts.paths ? { paths: opts.paths } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        if (ui.rich)
          ui.out(`Granted ${g.capability} to ${g.namespace}${g.paths ? ` (within ${g.paths.join(', ')})` : ''}\n`);
        else
          ui.out(
            renderFields(
              [
                ['namespace', g.namespace],
                ['capability', g.capability],
                ['paths', g.paths?.join(',')],
                ['by', g.grantedBy],
                ['at', g.grantedAt],
              ],
              ui.mode,
            ),
          );
        return { data: g };
      }),
    );
}

function registerGrantsRevoke(ns: CliCommand, runner: Runner): void {
  ns.command('revoke')
    .description(
      'Take a capability back from a namespace (server administrators; audited): its definitions that need it are refused at their next use',
    )
    .argument('<namespace>', 'the namespace')
    .argument('<capability>', `one of ${CAPABILITIES.join(', ')}`, capabilityArg)
    .calls(namespaceRevoke)
    .action((namespace: string, capability: Capability, _opts: unknown, cmd: Command) =>
      runner.run(cmd, 'namespace revoke', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(namespaceRevoke, { namespace, capability }, { signal: ctx.signal });
        const { ui } = ctx;
        if (ui.rich)
          ui.out(
            r.revoked
              ? `Revoked ${r.capability} from ${r.namespace}\n`
              : `${r.namespace} did not hold ${r.capability}: nothing changed\n`,
          );
        else
          ui.out(
            renderFields(
              [
                ['namespace', r.namespace],
                ['capability', r.capability],
                ['revoked', String(r.revoked)],
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

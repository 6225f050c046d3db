import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { SECRET_VALUE_MAX_BYTES, secretList, secretRemove, secretSet } from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';
import { whenText } from '../render/definition.render.ts';
import { renderFields, renderTable } from '../render/table.ts';
import type { Runner } from '../runner.ts';
import { readHidden } from '../support/hidden-input.ts';

interface NamespaceOpt {
  namespace?: string;
}

const NAMESPACE_HELP = 'the namespace (default: the --tenant, else your own)';

/**
 * `agents secret set|list|remove`: a namespace's secrets, which actors name with `apiKeySecret`.
 * A value is read from stdin (a hidden prompt at a terminal), never from an argument, and no
 * command prints one.
 */
export function registerSecret(program: CliCommand, runner: Runner): void {
  const secret = program
    .command('secret')
    .description("A namespace's secrets (e.g. an actor's API key, named by apiKeySecret): set from stdin, never shown");
  registerSecretSet(secret, runner);
  registerSecretList(secret, runner);
  registerSecretRemove(secret, runner);
}

function registerSecretSet(secret: CliCommand, runner: Runner): void {
  secret
    .command('set')
    .description(
      'Set a secret from stdin (typed without echo at a terminal, or piped): new, or a new value; one trailing newline is dropped',
    )
    .argument('<name>', 'the secret: a letter, then letters, digits, - and _')
    .option('--namespace <namespace>', NAMESPACE_HELP)
    .calls(secretSet)
    .action((name: string, opts: NamespaceOpt, cmd: Command) =>
      runner.run(cmd, 'secret set', async (ctx) => {
        const value = await readHidden(ctx.io, ctx.signal, {
          prompt: `Value of ${name} (not shown): `,
          pipe: 'all',
          // The agent takes one trailing newline off; the limit is its, checked again there.
          maxBytes: SECRET_VALUE_MAX_BYTES + 2,
          what: 'the value',
        });
        if (value.replace(/\r?\n$/, '') === '')
          throw new UsageError(
            'no value given',
            `pipe it on stdin (printf %s "$KEY" | agents secret set ${name}) or type it when asked`,
          );
        const client = await ctx.client();
        const r = await client.call(
          secretSet,
          { name, value, ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        if (ui.rich) {
          ui.out(`${r.created ? 'Set' : 'Replaced'} secret ${r.name} in ${r.namespace}\n`);
          ui.info(`an actor of ${r.namespace} uses it with apiKeySecret: ${r.name}`);
        } else
          ui.out(
            renderFields(
              [
                ['namespace', r.namespace],
                ['name', r.name],
                ['created', String(r.created)],
                ['updated', r.updatedAt],
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

function registerSecretList(secret: CliCommand, runner: Runner): void {
  secret
    .command('list')
    .description("List a namespace's secrets by name: who created them and when (never a value)")
    .option('--namespace <namespace>', NAMESPACE_HELP)
    .calls(secretList)
    .action((opts: NamespaceOpt, cmd: Command) =>
      runner.run(cmd, 'secret list', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(secretList, opts.namespace !== undefined ? { namespace: opts.namespace } : {}, {
          signal: ctx.signal,
        });
        const { ui } = ctx;
        if (r.secrets.length === 0)
          ui.info(`${r.namespace} has no secrets (add one: agents secret set NAME --namespace ${r.namespace})`);
        else
          ui.out(
            renderTable(
              r.secrets,
              [
                { header: 'NAME', value: (s) => s.name, style: (s) => ui.pal.bold(s) },
                { header: 'CREATED BY', value: (s) => s.createdBy },
                { header: 'CREATED', value: (s) => whenText(s.createdAt, ui.rich) },
                { header: 'UPDATED', value: (s) => whenText(s.updatedAt, ui.rich) },
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

function registerSecretRemove(secret: CliCommand, runner: Runner): void {
  secret
    .command('remove')
    .description('Remove a secret (actors naming it then have no key)')
    .argument('<name>', 'the secret')
    .option('--namespace <namespace>', NAMESPACE_HELP)
    .calls(secretRemove)
    .action((name: string, opts: NamespaceOpt, cmd: Command) =>
      runner.run(cmd, 'secret remove', async (ctx) => {
        const client = await ctx.client();
        const r = await client.call(
          secretRemove,
          { name, ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}) },
          { signal: ctx.signal },
        );
        const { ui } = ctx;
        if (ui.rich) ui.out(`Removed secret ${r.name} from ${r.namespace}\n`);
        else
          ui.out(
            renderFields(
              [
                ['namespace', r.namespace],
                ['name', r.name],
                ['removed', 'yes'],
              ],
              ui.mode,
            ),
          );
        return { data: r };
      }),
    );
}

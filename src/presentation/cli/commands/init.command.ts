import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { readConfigDocument, setConfigValue, writeConfigDocument } from '../config-file.ts';
import { configPath } from '../config-paths.ts';
import { chooseFromFlags, chooseInteractively, type InitFlags } from '../init/choose-endpoint.ts';
import {
  checkEndpoint,
  discover,
  endpointModels,
  INIT_PROVIDERS,
  type Endpoint,
  type Found,
} from '../init/endpoints.ts';
import { terminalPrompter } from '../init/prompt.ts';
import { gitTopLevel } from '../init/current-project.ts';
import { ensureProject, INIT_CALLS, upsertActor } from '../init/register.ts';
import type { Outcome, RunContext, Runner } from '../runner.ts';

function foundLines(found: Found): string[] {
  const lines: string[] = [];
  lines.push(
    found.ollama
      ? `Ollama at ${found.ollama.base}: ${found.ollama.models.length ? found.ollama.models.join(', ') : 'no models pulled'}`
      : 'no Ollama answers (OLLAMA_HOST or 127.0.0.1:11434)',
  );
  lines.push(`OPENAI_API_KEY ${found.openaiKey ? 'is set' : 'is not set'}`);
  lines.push(`ANTHROPIC_API_KEY ${found.anthropicKey ? 'is set' : 'is not set'}`);
  return lines;
}

/**
 * `agents init`: finds a model, checks that it answers, writes an actor for it (with the read/edit/
 * shell tools) and makes it the default; in a git repository, registers the repository as a project.
 * The endpoint is checked before anything is written, so a failed init leaves nothing half-set-up.
 */
async function init(ctx: RunContext, flags: InitFlags): Promise<Outcome> {
  const { ui } = ctx;
  const env = ctx.io.env;
  const found = await discover(env, ctx.signal);
  const interactive = ctx.io.stdin.isTTY === true && flags.yes !== true && ui.human;
  if (ui.rich)
    ui.out(
      `${ui.pal.bold('Found')}\n${foundLines(found)
        .map((l) => `  ${l}\n`)
        .join('')}`,
    );
  else for (const l of foundLines(found)) ui.info(l);

  let choice;
  if (interactive) {
    const prompter = terminalPrompter(ctx);
    try {
      // The models an endpoint lists are offered as choices; one that cannot be asked now is typed
      // (the check below then says what is wrong with the endpoint).
      const list = (ep: Endpoint): Promise<string[]> =>
        endpointModels(ep, env, ctx.signal).then(
          (r) => r.models,
          () => [],
        );
      choice = await chooseInteractively(flags, found, prompter, list);
    } finally {
      prompter.close();
    }
  } else choice = chooseFromFlags(flags, found);

  const { endpoint, model } = choice;
  // On a server the key is read from the server's environment: a key this machine lacks says nothing about it.
  const keyElsewhere = ctx.target.kind === 'server' && endpoint.apiKeyEnv !== undefined && !env[endpoint.apiKeyEnv];
  if (keyElsewhere)
    ui.warn(
      `not checked: ${endpoint.apiKeyEnv} is not set here, and the server reads it from its own environment (try the actor with agents actor run)`,
    );
  else {
    ui.info(`checking ${endpoint.baseUrl} (model ${model}) …`);
    await checkEndpoint(endpoint, model, env, ctx.signal);
    if (ui.rich) ui.out(`${ui.pal.green('✓')} ${endpoint.baseUrl} answers and has ${model}\n`);
  }

  const client = await ctx.client();
  const actor = await upsertActor(client, choice, ctx.signal);
  if (ui.rich)
    ui.out(`${ui.pal.green('✓')} actor ${ui.pal.bold(actor.name)} ${actor.action} (${model}, tools read/edit/bash)\n`);
  else ui.out(`actor\t${actor.name}\t${actor.action}\t${model}\n`);

  let project: { project: string; resource: string; action: 'added' | 'existing' } | undefined;
  if (flags.project !== false) {
    const top = gitTopLevel(process.cwd());
    if (!top) ui.done('not in a git repository: no project registered (run agents init in one to add it)');
    else if (ctx.target.kind === 'server')
      // A server works on its own directories: this machine's path means nothing there.
      ui.done(
        `on a server: ${top} is not registered (the server's resources are its own paths; an administrator adds them with agents resource add)`,
      );
    else {
      project = await ensureProject(client, top, ctx.signal);
      const what = project.action === 'added' ? 'registered' : 'already registered';
      if (ui.rich) ui.out(`${ui.pal.green('✓')} project ${ui.pal.bold(project.project)} ${what} (${top})\n`);
      else ui.out(`project\t${project.project}\t${project.action}\t${top}\n`);
    }
  }

  // Last: the default names an actor that now exists.
  const cfg = readConfigDocument(configPath(env));
  setConfigValue(cfg, 'defaultActor', actor.name);
  writeConfigDocument(cfg);
  if (ui.rich) {
    ui.out(`${ui.pal.green('✓')} defaultActor: ${actor.name} in ${cfg.path}\n`);
    ui.out(`\n${ui.pal.bold('done')}: start with ${ui.pal.bold('agents chat')}\n`);
  } else {
    ui.out(`config\tdefaultActor\t${actor.name}\t${cfg.path}\n`);
    ui.out('done\tagents chat\n');
  }
  return {
    data: {
      actor: { ...actor, model, provider: endpoint.provider, baseUrl: endpoint.baseUrl },
      project: project ?? null,
      config: { path: cfg.path, defaultActor: actor.name },
      next: 'agents chat',
    },
  };
}

/** `agents init`: a first chat in a minute. */
export function registerInit(program: CliCommand, runner: Runner): void {
  program
    .command('init')
    .description(
      'Set up a model: find Ollama or an API key, check it answers, write an actor and make it the default; register this repository',
    )
    .option('--provider <provider>', `the model's provider: ${INIT_PROVIDERS.join(', ')} (default: the first found)`)
    .option('--model <name>', 'the model (default for Ollama: its first model; asked on a terminal)')
    .option('--url <url>', "the endpoint's base URL (required for openai-compatible; e.g. http://127.0.0.1:8000/v1)")
    .option(
      '--api-key-env <name>',
      'the environment variable holding the API key (default: OPENAI_API_KEY / ANTHROPIC_API_KEY)',
    )
    .option('--name <name>', 'the actor to write (default: local/ollama, local/openai, local/anthropic or local/llm)')
    .option('-y, --yes', 'ask nothing: take the flags and the first thing found')
    .option('--no-project', 'do not register the current git repository as a project')
    .calls(...INIT_CALLS)
    .addHelpText(
      'after',
      `
Examples:
  agents init
  agents init --provider ollama --model llama3.2 --yes
  agents init --provider openai-compatible --url http://gpu:8000/v1 --model qwen
  agents init --provider openai --model gpt-4o-mini --api-key-env MY_KEY --yes`,
    )
    .action((opts: InitFlags, cmd: Command) => runner.run(cmd, 'init', (ctx) => init(ctx, opts)));
}

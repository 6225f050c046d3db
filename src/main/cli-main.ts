import type { ServeOptions, ServerMaintenance } from '../presentation/cli/index.ts';
import { STARTUP_MARKS_ENV, startupMark } from './startup-marks.ts';
import { VERSION } from './version.ts';

/**
 * The `agents` command, once bin.ts has checked the Node version: `bin` is the script a local
 * agent is spawned with (bin.ts itself, so that the agent gets the same check and compile cache).
 */
export async function main(bin: string, args: readonly string[] = process.argv.slice(2)): Promise<void> {
  startupMark('main');
  if (process.env[STARTUP_MARKS_ENV]) process.once('exit', () => startupMark('exit'));
  // Loaded only for `agents serve`, so client commands start fast.
  const serve = async (opts: ServeOptions): Promise<number> => (await import('./serve.ts')).serve(opts);
  // `agents --version` and `agents --help` alone need none of the commands: answered before those
  // load (the help lists them from an index, see presentation/cli/help.ts). `agents serve …` (what
  // every local-mode command spawns) needs only its own flags: parsed without the command tree.
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    (await import('../presentation/cli/closed-pipe.ts')).quietOnClosedPipes();
    process.stdout.write(`${VERSION}\n`);
  } else if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    process.exitCode = (await import('../presentation/cli/help.ts')).printHelp(VERSION);
  } else if (args[0] === 'serve') {
    process.exitCode = await (
      await import('../presentation/cli/serve-cli.ts')
    ).runServe(process.argv, { version: VERSION, serve });
  } else {
    // Spawned before the commands load, so that it starts while they do.
    const early = (await import('../presentation/cli/early-agent.ts')).spawnEarlyAgent(args, process.env, bin);
    startupMark('cli:agent-spawned');
    const { runCli } = await import('../presentation/cli/index.ts');
    startupMark('cli:commands-loaded');
    // Loaded only for `agents server migrate|backup|restore`.
    const maintenance = async (): Promise<ServerMaintenance> =>
      (await import('./server-maintenance.ts')).serverMaintenance();
    process.exitCode = await runCli(process.argv, {
      version: VERSION,
      bin,
      serve,
      maintenance,
      ...(early ? { early } : {}),
    });
  }
}

#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import type { ServeOptions } from '../presentation/cli/index.ts';
import { VERSION } from './version.ts';

const args = process.argv.slice(2);
// Loaded only for `agents serve`, so client commands start fast.
const serve = async (opts: ServeOptions): Promise<number> => (await import('./serve.ts')).serve(opts);
// `agents --version` and `agents --help` alone need none of the commands: answered before those
// load (the help lists them from an index, see presentation/cli/help.ts). `agents serve …` (what
// every local-mode command spawns) needs only its own flags: parsed without the command tree.
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
  process.exitCode = (await import('../presentation/cli/help.ts')).printHelp(VERSION);
} else if (args[0] === 'serve') {
  process.exitCode = await (
    await import('../presentation/cli/serve-cli.ts')
  ).runServe(process.argv, { version: VERSION, serve });
} else {
  // A local agent runs this same script: the bundle, when the CLI is the bundle.
  const bin = fileURLToPath(import.meta.url);
  // Spawned before the commands load, so that it starts while they do.
  const early = (await import('../presentation/cli/early-agent.ts')).spawnEarlyAgent(args, process.env, bin);
  const { runCli } = await import('../presentation/cli/index.ts');
  process.exitCode = await runCli(process.argv, { version: VERSION, bin, serve, ...(early ? { early } : {}) });
}

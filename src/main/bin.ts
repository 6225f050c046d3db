#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { VERSION } from './version.js';

const args = process.argv.slice(2);
// `agents --version` alone needs none of the CLI: answered before the command modules load.
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const { runCli } = await import('../presentation/cli/index.js');
  process.exitCode = await runCli(process.argv, {
    version: VERSION,
    // A local agent runs this same script: the bundle, when the CLI is the bundle.
    bin: fileURLToPath(import.meta.url),
    // Loaded only for `agents serve`, so client commands start fast.
    serve: async (opts) => (await import('./serve.js')).serve(opts),
  });
}

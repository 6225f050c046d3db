#!/usr/bin/env node
import { runCli } from '../presentation/cli/index.js';
import { VERSION } from './version.js';

const code = await runCli(process.argv, {
  version: VERSION,
  // Loaded only for `agents serve`, so client commands start fast.
  serve: async (opts) => (await import('./serve.js')).serve(opts),
});
process.exitCode = code;

#!/usr/bin/env node
/**
 * The `agents` command's entry (package.json `bin` is its bundle, dist/src/bundle/agents.js). It
 * checks the Node version before anything else loads: the bundle's other chunks, and the
 * dependencies in them, would otherwise fail on an old Node with a stack trace about some missing
 * API. So this file and what it imports statically use only what every Node since 18 has, and
 * import no module that any other chunk shares (build/bundle.ts checks that the entry imports no
 * chunk).
 */
import { fileURLToPath } from 'node:url';
import { startCompileCache } from './compile-cache.ts';
import { nodeVersionRefusal } from './node-version.ts';

const refusal = nodeVersionRefusal(process.versions.node);
if (refusal !== undefined) {
  process.stderr.write(`${refusal}\n`);
  process.exitCode = 1;
} else {
  // Before the first import of the rest, so that every module after it is read from the cache.
  startCompileCache();
  // A local agent runs this same script: the bundle's entry, when the CLI is the bundle.
  await (await import('./cli-main.ts')).main(fileURLToPath(import.meta.url));
}

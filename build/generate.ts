/**
 * `npm run generate`: writes what is derived from the method contracts and the CLI's command table
 * into docs/reference/ — methods.md, openrpc.json and cli.md — so that a method is declared once.
 * `--check` writes nothing and exits 1 when a file differs from what would be written (CI runs it
 * before the tests). The output is deterministic: no dates, families and commands in a fixed order.
 * Runs from source on Node 24 (`node build/generate.ts [--check]`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { COMMAND_METHODS, NO_COMMAND_EXPECTED, SERVER_COMMANDS } from '../src/presentation/cli/command-methods.ts';
import { CONTRACT_FAMILIES, CONTRACTS } from '../src/protocol/a2a/contracts/index.ts';
import { buildOpenRpc } from '../src/protocol/a2a/openrpc.ts';
import { renderCli } from './generate/cli-doc.ts';
import { renderMethods } from './generate/methods-doc.ts';

const USAGE = 'usage: node build/generate.ts [--check]';
const ROOT = resolve(import.meta.dirname, '..');
/** What `agents serve` answers at GET /openrpc.json with its default port. */
const DEFAULT_ENDPOINT = 'http://127.0.0.1:8080/a2a';

function outputs(): Array<{ path: string; text: string }> {
  const { version } = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
  const openRpc = buildOpenRpc(CONTRACTS, { version, endpoint: DEFAULT_ENDPOINT });
  return [
    { path: 'docs/reference/methods.md', text: renderMethods(CONTRACT_FAMILIES) },
    { path: 'docs/reference/openrpc.json', text: `${JSON.stringify(openRpc, null, 2)}\n` },
    {
      path: 'docs/reference/cli.md',
      text: renderCli({
        commands: COMMAND_METHODS,
        serverCommands: SERVER_COMMANDS,
        noCommandExpected: NO_COMMAND_EXPECTED,
      }),
    },
  ];
}

const readOrNull = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

function main(argv: string[]): number {
  let check: boolean;
  try {
    const { values } = parseArgs({ args: argv, options: { check: { type: 'boolean' } }, strict: true });
    check = values.check ?? false;
  } catch (err) {
    process.stderr.write(`generate: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  const stale: string[] = [];
  for (const { path, text } of outputs()) {
    const file = resolve(ROOT, path);
    if (readOrNull(file) === text) continue;
    if (check) stale.push(relative(ROOT, file));
    else {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      process.stdout.write(`wrote ${path}\n`);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(`generate: ${stale.join(', ')} out of date with the sources: run npm run generate\n`);
    return 1;
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));

/**
 * The fixture MCP server over stdio: `node test/support/mcp-fixture-server.ts`.
 * Tools: see mcp-fixture-tools.ts. Environment:
 *   FIXTURE_DIR   where `write_note` writes
 *   FIXTURE_MODE  (unset) serves; `hang` never answers initialize; `exit` writes a line to stderr
 *                 and exits 3 at once; `many` lists 150 generated tools over pages of 50;
 *                 `stubborn` serves but ignores SIGTERM and the end of its stdin (only SIGKILL stops it)
 *   FIXTURE_READY_FILE  when set, the server behaves as FIXTURE_MODE=exit until that file exists
 */
import { existsSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createFixtureServer } from './mcp-fixture-tools.ts';

async function main(): Promise<void> {
  const gate = process.env.FIXTURE_READY_FILE;
  const mode = gate !== undefined && !existsSync(gate) ? 'exit' : (process.env.FIXTURE_MODE ?? '');
  if (mode === 'exit') {
    process.stderr.write('fixture: refusing to start (FIXTURE_MODE=exit)\n');
    process.exit(3);
  }
  if (mode === 'hang') {
    process.stdin.resume();
    setInterval(() => {}, 60_000);
    return;
  }
  if (mode === 'stubborn') {
    process.on('SIGTERM', () => process.stderr.write('fixture: ignoring SIGTERM\n'));
    setInterval(() => {}, 60_000);
  }
  const server = createFixtureServer({
    instance: 1,
    state: { cancelled: 0, running: 0 },
    fixtureDir: process.env.FIXTURE_DIR,
    many: mode === 'many',
    crash: () => process.stderr.write('boom\n', () => process.exit(1)),
  });
  await server.connect(new StdioServerTransport());
}

// `node --test` loads every file under test/, this one too: then it does nothing.
if (process.env.NODE_TEST_CONTEXT === undefined) {
  main().catch((err: unknown) => {
    process.stderr.write(`fixture: ${String(err)}\n`);
    process.exit(2);
  });
}

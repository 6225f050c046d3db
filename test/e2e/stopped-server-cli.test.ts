/**
 * End to end: logged in to a server that has stopped, every command fails (exit 6) with a hint
 * that names the way out — the server's URL, `--local`, and `agents logout` — and `--local` works.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentsCli, cliEnv, type CliResult } from '../support/cli.ts';
import { startHttpServer } from '../support/harness.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-stopped-server-e2e');
const TOKEN = 'e2e-stopped-token-0123456789abcdefg';

const said = (r: CliResult): string => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe('logged in to a server that is stopped', () => {
  it('says how to work without it: --local, or agents logout --server <url>; --local works', async () => {
    const dataDir = join(ROOT, 'server');
    const server = await startHttpServer({ dataDir, token: TOKEN, env: cliEnv(dataDir, join(ROOT, 'no-config')) });
    // A config directory of its own: the stored login sends this user's commands to the server.
    const cli = agentsCli({ dataDir: join(ROOT, 'user'), configHome: join(ROOT, 'user-config') });
    const url = server.baseUrl.replace(/\/+$/, '');
    try {
      await cli.run(['login', '--server', url], { input: `${TOKEN}\n`, code: 0 });
    } finally {
      await server.stop();
    }
    const r = await cli.run(['plan', 'list']);
    assert.equal(r.code, 6, said(r));
    assert.match(r.stderr, new RegExp(`^error: cannot reach the agent server at ${url}: `, 'm'));
    assert.match(
      r.stderr,
      new RegExp(
        `^hint: check that a server runs at ${url} \\(agents serve\\) and that the URL is right; or work without it: add --local to use a local agent, or forget the login with agents logout --server ${url}$`,
        'm',
      ),
    );
    const local = await cli.run(['--local', 'plan', 'list']);
    assert.equal(local.code, 0, said(local));
    // Without a login, a --server given by hand keeps the short hint: there is no login to forget.
    const given = await agentsCli({ dataDir: join(ROOT, 'other'), configHome: join(ROOT, 'other-config') }).run([
      '--server',
      url,
      '--token',
      TOKEN,
      'plan',
      'list',
    ]);
    assert.equal(given.code, 6, said(given));
    assert.doesNotMatch(given.stderr, /logout/);
  });
});

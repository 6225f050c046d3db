/**
 * Per-user limits as an operator and a member meet them (issue #40): `agents serve` takes the
 * defaults from flags and the environment, an administrator overrides them per namespace with
 * `agents namespace limits`, a member may not, and a member over a limit is told which limit,
 * for which namespace, and when it resets.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliPerson } from '../support/cli.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { findKey } from '../support/team-server.ts';

const ADMIN = 'limits-cli-admin-token-0123456789abcdef';

describe('per-user limits through the CLI', () => {
  const root = mkdtempSync(join(tmpdir(), 'agents-limits-cli-'));
  let server: HttpServerProcess;
  const admin = cliPerson(root, 'admin');
  const alice = cliPerson(root, 'alice');

  before(async () => {
    server = await startHttpServer({
      dataDir: join(root, 'server'),
      token: ADMIN,
      args: ['--rate-limit-rpm', '100', '--max-concurrent-turns', '1'],
      env: { ...process.env, CLEVERAGENTS_TOKENS_PER_DAY: '5000', CLEVERAGENTS_AUTH_FAILURES_PER_MINUTE: '0' },
    });
    await admin.ok(['login', '--server', server.baseUrl], `${ADMIN}\n`);
    const key = findKey(await admin.ok(['user', 'add', 'alice'])) ?? '';
    assert.ok(key);
    await alice.ok(['login', '--server', server.baseUrl], `${key}\n`);
  });
  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("shows the server's defaults, from its flags and environment", async () => {
    const shown = await admin.ok(['namespace', 'limits', 'alice']);
    const defaults = { requestsPerMinute: 100, concurrentTurns: 1, tokensPerDay: 5000 };
    assert.deepEqual([shown.limits, shown.defaults, shown.overrides], [defaults, defaults, {}]);
    const text = await admin.run(['namespace', 'limits', 'alice']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /requests per minute\s+100\s+server default/);
  });

  it('lets a member not change limits', async () => {
    const r = await alice.run(['namespace', 'limits', 'alice', '--rpm', '0']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /server administrators/);
  });

  it("an administrator's override applies to the member at once; over it, the member is told when it resets", async () => {
    const set = await admin.ok(['namespace', 'limits', 'alice', '--rpm', '2', '--tokens-per-day', 'default']);
    assert.deepEqual(set.overrides, { requestsPerMinute: 2 });
    assert.equal(set.limits.requestsPerMinute, 2);
    let refused: { code: number | null; stderr: string } | undefined;
    for (let i = 0; i < 4 && !refused; i++) {
      const r = await alice.run(['task', 'list']);
      if (r.code !== 0) refused = r;
    }
    assert.ok(refused, 'a run past two requests in the minute is refused');
    assert.equal(refused.code, 11, 'BUDGET_EXCEEDED');
    assert.match(
      refused.stderr,
      /Limit of 2 requests per minute reached \(the limits of namespace alice\); it resets at \S+ \(in \d+ s\)/,
    );
    assert.match(refused.stderr, /agents namespace limits alice/);
  });
});

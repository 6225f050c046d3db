/**
 * The hook runner with real processes (confined by the real bubblewrap) and a real HTTP server:
 * the event on stdin, the confined environment, timeouts, and webhooks' answers and refusals.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CommandConfinement, EgressGuard, LocalHookRunner } from '../../../../src/infrastructure/index.ts';
import type { HookInvocation } from '../../../../src/application/index.ts';
import { HookDefinition } from '../../../../src/domain/registry/hook.ts';
import { freePort } from '../../../support/ports.ts';

const SECRET = 'sk-hook-secret-0123456789';

describe('the local hook runner', () => {
  let work: string;
  let runner: LocalHookRunner;
  let server: http.Server;
  let url: string;
  const received: Array<{ body: string; headers: http.IncomingHttpHeaders }> = [];
  let answer: { status: number; body: string } = { status: 200, body: '' };

  const inv = (hook: Record<string, unknown>, extra: Partial<HookInvocation> = {}): HookInvocation => ({
    hook: HookDefinition.parse({ name: 'local/h', event: 'before-tool-call', ...hook }),
    payload: JSON.stringify({ event: 'before-tool-call', tool: 'builtin/read-file' }),
    network: 'none',
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    ...extra,
  });
  const sh = (script: string) => ({ command: { program: 'sh', args: ['-c', script] } });

  before(async () => {
    work = fs.realpathSync(fs.mkdtempSync('/var/tmp/ca-hooks-'));
    const confinement = await CommandConfinement.probe({
      mode: 'bubblewrap',
      home: work,
      secrets: [],
      limits: { maxProcesses: 0 },
      serverEnv: { ...process.env, HOOK_TEST_SECRET: SECRET },
    });
    assert.equal(confinement.mode, 'bubblewrap', confinement.describe());
    runner = new LocalHookRunner({
      confinement,
      egress: new EgressGuard({ allow: ['127.0.0.1'] }),
      scratchRoot: work,
    });
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ body, headers: req.headers });
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(answer.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('gives a command the event on stdin, keeps stdout apart for the answer, and its exit status', async () => {
    const o = await runner.run(inv(sh('cat; echo; echo "to stderr" >&2; exit 4')));
    assert.equal(o.exitCode, 4);
    assert.equal(o.failure, undefined);
    assert.equal(o.answer, '{"event":"before-tool-call","tool":"builtin/read-file"}\n');
    assert.match(o.output, /to stderr/);
  });

  it("runs confined: the server's environment is not there, the hook's own env is", async () => {
    const o = await runner.run(
      inv({
        command: { program: 'sh', args: ['-c', 'echo "secret=$HOOK_TEST_SECRET mine=$MINE"'], env: { MINE: 'yes' } },
      }),
    );
    assert.equal(o.exitCode, 0);
    assert.equal(o.answer, 'secret= mine=yes\n');
    assert.ok(!o.output.includes(SECRET));
  });

  it('runs in the work directory given, or in an empty one of its own that is removed after', async () => {
    const dir = fs.mkdtempSync(path.join(work, 'wd-'));
    assert.equal((await runner.run(inv(sh('pwd; touch made'), { workdir: dir }))).answer, `${dir}\n`);
    assert.ok(fs.existsSync(path.join(dir, 'made')), 'it may write its work directory');
    const own = await runner.run(inv(sh('pwd; ls -A | wc -l')));
    const [cwd, count] = own.answer.trim().split('\n');
    assert.equal(count?.trim(), '0');
    assert.ok(cwd && !fs.existsSync(cwd), 'the scratch directory is gone');
  });

  it('a command past its timeout is killed and fails; one that cannot start fails', async () => {
    const slow = await runner.run(inv(sh('sleep 30'), { timeoutMs: 300 }));
    assert.equal(slow.failure, 'it timed out after 0.3 s');
    const missing = await runner.run(inv({ command: { program: 'no-such-program-xyz' } }));
    assert.match(missing.failure ?? '', /^it could not be started: .*ENOENT/);
  });

  it('POSTs the event to a webhook with its headers, and keeps the status and the body', async () => {
    answer = { status: 200, body: '{"decision":"deny","reason":"frozen"}' };
    const o = await runner.run(inv({ webhook: { url, headers: { 'X-Hook-Token': 't0k' } } }));
    assert.deepEqual(o, {
      answer: '{"decision":"deny","reason":"frozen"}',
      output: '{"decision":"deny","reason":"frozen"}',
      status: 200,
    });
    const last = received.at(-1);
    assert.equal(last?.body, '{"event":"before-tool-call","tool":"builtin/read-file"}');
    assert.equal(last?.headers['x-hook-token'], 't0k');
    assert.equal(last?.headers['content-type'], 'application/json');
  });

  it('a webhook to a refused address, or nobody, fails saying why', async () => {
    const refused = new LocalHookRunner({
      confinement: CommandConfinement.unconfined(),
      egress: new EgressGuard(),
    });
    const r = await refused.run(inv({ webhook: { url } }));
    assert.match(
      r.failure ?? '',
      /^its URL is refused: egress to 127\.0\.0\.1 is refused: it is a loopback address; a server administrator may allow it with `agents serve --allow-egress 127\.0\.0\.1:\d+`$/,
    );
    const nobody = await runner.run(inv({ webhook: { url: `http://127.0.0.1:${await freePort()}/x` } }));
    assert.match(nobody.failure ?? '', /could not be reached/);
  });

  it("reaches a loopback webhook when the hook's namespace holds private-network, with no allowlist", async () => {
    const guarded = new LocalHookRunner({ confinement: CommandConfinement.unconfined(), egress: new EgressGuard() });
    answer = { status: 200, body: 'ok' };
    const before = received.length;
    const o = await guarded.run({ ...inv({ webhook: { url } }), privateNetwork: true });
    assert.deepEqual([o.status, o.failure, received.length], [200, undefined, before + 1]);
  });
});

/**
 * End to end, server mode: the egress guard between an actor and its endpoint. An actor whose
 * baseUrl is a fake LLM on 127.0.0.1 answers while the administrator allowlists that host and
 * port (`agents serve --allow-egress 127.0.0.1:<port>`); after a restart without it, the chat
 * turn fails at connect time with the guard's reason, and nothing reaches the endpoint. A
 * malformed allowlist entry stops the start with a hint.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, cliEnv } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { startHttpServer, startupErrorLine, type HttpServerProcess } from '../support/harness.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-egress-e2e');
const KEY = 'sk-egress-0123456789abcdef';
const TOKEN = 'egress-e2e-token-0123456789abcdefgh';
const DATA = join(ROOT, 'server');
const CLIENT = join(ROOT, 'client');
const cli = agentsCli({ dataDir: CLIENT, configHome: join(ROOT, 'no-config') });

let fake: FakeLlm;
let port: string;

/** `agents serve` on the shared data dir; the allowlist is only what `args` says. */
function serve(args: string[] = []): Promise<HttpServerProcess> {
  return startHttpServer({
    dataDir: DATA,
    token: TOKEN,
    args,
    env: cliEnv(DATA, join(ROOT, 'no-config'), {
      LLM_E2E_KEY: KEY,
      CLEVERAGENTS_ALLOW_EGRESS: '',
      CLEVERAGENTS_LLM_RETRY_BASE_MS: '20',
    }),
  });
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  port = new URL(fake.url).port;
});

after(async () => {
  await fake?.close();
});

describe('the egress guard between an actor and its endpoint (server mode)', () => {
  it('an actor on a loopback endpoint answers while the administrator allowlists it, and is refused at connect time after', async () => {
    let server = await serve(['--allow-egress', `127.0.0.1:${port}`]);
    const remote = (...args: string[]): string[] => ['--server', server.baseUrl, '--token', TOKEN, ...args];
    try {
      assert.match(
        server.stderr(),
        new RegExp(`outbound requests may reach these internal hosts: 127\\.0\\.0\\.1:${port}`),
      );
      // A team's actor (local/ on a server is the administrator's and reaches anything): the team
      // may read the server's key variable, not reach private addresses.
      assert.equal((await cli.run(remote('namespace', 'create', 'team'))).code, 0);
      assert.equal((await cli.run(remote('namespace', 'grant', 'team', 'server-secret'))).code, 0);
      const actor = join(ROOT, 'gpt.yaml');
      writeFileSync(
        actor,
        `name: team/gpt\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: LLM_E2E_KEY\nmaxRetries: 2\n`,
      );
      const added = await cli.run(remote('actor', 'add', '--config', actor));
      assert.equal(added.code, 0, added.stderr);
      fake.push({ text: ['allowed', ' answer'] });
      const ok = await cli.run(remote('--tenant', 'team', 'send', '--actor', 'team/gpt', 'hi'));
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /allowed answer/);
    } finally {
      await server.stop();
    }

    server = await serve();
    try {
      const sent = fake.requests.length;
      const refused = await cli.run(remote('--tenant', 'team', 'send', '--actor', 'team/gpt', 'hi'));
      assert.notEqual(refused.code, 0, refused.stdout);
      const said = `${refused.stdout}\n${refused.stderr}`;
      assert.match(
        said,
        new RegExp(
          `egress to 127\\.0\\.0\\.1 is refused: it is a loopback address; a server administrator may allow it with \`agents serve --allow-egress 127\\.0\\.0\\.1:${port}\``,
        ),
      );
      assert.equal(fake.requests.length, sent, 'nothing reached the endpoint, not even a retry');
      // The administrator lets team reach private addresses: the same actor answers again.
      assert.equal((await cli.run(remote('namespace', 'grant', 'team', 'private-network'))).code, 0);
      fake.push({ text: ['granted', ' answer'] });
      const granted = await cli.run(remote('--tenant', 'team', 'send', '--actor', 'team/gpt', 'hi'));
      assert.equal(granted.code, 0, granted.stderr);
      assert.match(granted.stdout, /granted answer/);
    } finally {
      await server.stop();
    }
  });

  it('a malformed --allow-egress entry stops the start with a hint (exit 2)', async () => {
    const res = await cli.run([
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(ROOT, 'bad'),
      '--allow-egress',
      'http://x:1/',
    ]);
    assert.equal(res.code, 2, res.stderr);
    const line = startupErrorLine(res.stderr);
    assert.match(line.msg, /the egress allowlist entry "http:\/\/x:1\/" is not a host name or an IP address/);
    assert.match(line.hint, /--allow-egress 127\.0\.0\.1:11434/);
    const env = await cli.run(['serve', '--port', '0', '--data-dir', join(ROOT, 'bad')], {
      env: {
        CLEVERAGENTS_ALLOW_EGRESS: '127.0.0.1:99999',
      },
    });
    assert.equal(env.code, 2, env.stderr);
    assert.match(env.stderr, /port that is not a number from 1 to 65535 \(from CLEVERAGENTS_ALLOW_EGRESS\)/);
  });
});

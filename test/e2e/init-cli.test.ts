/**
 * End to end: `agents init` as a new user runs it. On a terminal (tmux, its own socket) against a
 * fake OpenAI-compatible server that also answers Ollama's `/api/tags` (OLLAMA_HOST points at it):
 * the Ollama model is chosen by number, init says done and names `agents chat`; re-running keeps
 * one actor; then `agents send` in the repository uses its project and the new actor. Also a
 * flags-only run without a terminal, and an unreachable endpoint (a clear error, nothing written).
 * Against `agents serve`: the key only the server holds is not checked from here (a warning), and
 * this machine's repository is not registered on the server (a clear line).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, BIN, cliEnv, type Agents } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { shellQuote, terminalScript, tmuxOn } from '../support/terminal.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-init-e2e-'));
const SOCKET = `ca-init-e2e-${process.pid}`;

let fake: FakeLlm;
let repo: string;

const tmux = tmuxOn(SOCKET, { joined: true });
const { see } = tmux;

/** Runs `agents init` in the repository on a tmux terminal, through a script that prints its exit status. */
function startInit(name: string, dataDir: string, configHome: string): void {
  const env = cliEnv(dataDir, configHome, { OLLAMA_HOST: fake.url.replace(/\/v1$/, '') });
  delete env['OPENAI_API_KEY'];
  delete env['ANTHROPIC_API_KEY'];
  const script = terminalScript(join(ROOT, `${name}.sh`), env, [
    `cd ${shellQuote(repo)}`,
    `${shellQuote(process.execPath)} ${shellQuote(BIN)} init`,
  ]);
  tmux('new-session', '-d', '-s', name, '-x', '150', '-y', '50', script);
}

describe('agents init', { timeout: 180_000 }, () => {
  before(async () => {
    fake = await startFakeOpenAI({ models: ['llama3.2:latest', 'qwen2.5-coder:7b'] });
    repo = join(ROOT, 'app');
    initRepo(repo, { 'README.md': '# app\n' });
  });
  after(async () => {
    try {
      tmux('kill-server');
    } catch {
      // No session was started.
    }
    await fake.close();
    rmSync(ROOT, { recursive: true, force: true });
  });

  it('on a terminal: chooses the Ollama model, checks it, says done; a re-run edits; send uses the project and actor', async () => {
    const dataDir = join(ROOT, 'tty-data');
    const configHome = join(ROOT, 'tty-config');
    startInit('first', dataDir, configHome);
    await see('first', /1\) Ollama at http:\/\/127\.0\.0\.1:\d+ \(2 models\)/);
    await see('first', /Choose 1-2 \[1\]:/);
    tmux('send-keys', '-t', 'first', '1', 'Enter');
    await see('first', /Which model\?\n {2}1\) llama3\.2:latest\n {2}2\) qwen2\.5-coder:7b/);
    tmux('send-keys', '-t', 'first', '2', 'Enter');
    const shown = await see('first', /EXIT:\d+/);
    assert.match(shown, /actor\s+local\/ollama\s+added/, shown);
    assert.match(shown, /project local\/app registered/, shown);
    assert.match(shown, /done: start with agents chat/, shown);
    assert.match(shown, /EXIT:0/, shown);
    assert.ok(
      fake.requests.some((r) => r.method === 'GET' && r.path === '/v1/models'),
      'init asked the endpoint for its models before saying done',
    );
    assert.match(
      readFileSync(join(configHome, 'cleveragents', 'config.yaml'), 'utf8'),
      /^defaultActor: local\/ollama$/m,
    );

    startInit('again', dataDir, configHome);
    await see('again', /Choose 1-2 \[1\]:/);
    tmux('send-keys', '-t', 'again', 'Enter');
    await see('again', /Which model\?/);
    tmux('send-keys', '-t', 'again', 'Enter');
    const again = await see('again', /EXIT:\d+/);
    assert.match(again, /actor\s+local\/ollama\s+updated/, again);
    assert.match(again, /project local\/app already registered/, again);

    const agents = agentsCli({ dataDir, configHome, cwd: repo });
    const actors = await agents.ok(['actor', 'list']);
    const ours = actors.items.filter((a: { name: string }) => !a.name.startsWith('builtin/'));
    assert.deepEqual(
      ours.map((a: { name: string; definition: { model: string; tools: string[] } }) => [
        a.name,
        a.definition.model,
        a.definition.tools,
      ]),
      [['local/ollama', 'llama3.2:latest', ['builtin/read', 'builtin/edit', 'builtin/bash']]],
      'a re-run updates the one actor',
    );
    assert.equal((await agents.ok(['project', 'list'])).items.length, 1, 'a re-run keeps one project');

    fake.push({ text: ['Hi from ', 'the model.'] });
    const sent = await agents.ok(['send', 'hello there']);
    const session = await agents.ok(['session', 'show', sent.task.contextId]);
    assert.equal(session.session.actor, 'local/ollama');
    assert.equal(session.session.project, 'local/app');
    const answer = sent.task.artifacts
      .flatMap((a: { parts: Array<{ text?: string }> }) => a.parts.map((p) => p.text ?? ''))
      .join('');
    assert.equal(answer, 'Hi from the model.');
    const last = fake.generations.at(-1)?.body as { model?: string } | undefined;
    assert.equal(last?.model, 'llama3.2:latest');
  });

  it('without a terminal: takes the flags, and writes the actor and the default', async () => {
    const agents = agentsCli({ dataDir: join(ROOT, 'flags-data'), cwd: repo });
    const data = await agents.ok([
      'init',
      '--provider',
      'openai-compatible',
      '--url',
      fake.url,
      '--model',
      'qwen2.5-coder:7b',
      '--name',
      'coder',
      '--no-project',
    ]);
    assert.equal(data.actor.name, 'local/coder');
    assert.equal(data.actor.action, 'added');
    assert.equal(data.project, null);
    assert.equal(data.next, 'agents chat');
    assert.equal((await agents.run(['config', 'get', 'defaultActor'], { code: 0 })).stdout, 'local/coder\n');
    assert.equal((await agents.ok(['project', 'list'])).items.length, 0, '--no-project registers nothing');
  });

  it('an unreachable endpoint: the exact error and what to do, a non-zero exit, nothing written', async () => {
    const agents = agentsCli({ dataDir: join(ROOT, 'down-data'), cwd: repo });
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const r = await agents.run([
      'init',
      '--provider',
      'ollama',
      '--url',
      `http://127.0.0.1:${port}`,
      '--model',
      'x',
      '--yes',
    ]);
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stderr, new RegExp(`error: cannot reach http://127\\.0\\.0\\.1:${port}/v1/models: ECONNREFUSED`));
    assert.match(r.stderr, /start Ollama \(ollama serve\), or set OLLAMA_HOST/);
    assert.doesNotMatch(r.stdout, /done/);
    assert.equal(existsSync(join(agents.configHome, 'cleveragents', 'config.yaml')), false, 'no default was written');
    const actors = await agents.ok(['actor', 'list']);
    assert.deepEqual(
      actors.items.map((a: { name: string }) => a.name).filter((n: string) => !n.startsWith('builtin/')),
      [],
    );
  });
});

describe('agents init against a server', { timeout: 120_000 }, () => {
  const KEY = 'sk-init-server-e2e-0123456789abcdef';
  const TOKEN = 'init-server-e2e-token-0123456789abcdef';
  let served: FakeLlm;
  let server: HttpServerProcess;
  let agents: Agents;
  before(async () => {
    served = await startFakeOpenAI({ expectKey: KEY, models: ['served-model'] });
    repo ??= join(ROOT, 'app');
    if (!existsSync(repo)) initRepo(repo, { 'README.md': '# app\n' });
    const dataDir = join(ROOT, 'server-data');
    // The key is in the server's environment only: the CLI's runs do not have it.
    server = await startHttpServer({
      dataDir,
      token: TOKEN,
      env: cliEnv(dataDir, join(ROOT, 'server-config'), { INIT_SERVER_KEY: KEY }),
    });
    agents = agentsCli({
      dataDir: join(ROOT, 'server-client'),
      cwd: repo,
      prefix: () => ['--server', server.baseUrl, '--token', TOKEN],
    });
  });
  after(async () => {
    await server?.stop();
    await served?.close();
  });

  it('says the key is not checked from here, skips the project with a clear line, and the actor answers through the server', async () => {
    const args = ['init', '--provider', 'openai-compatible', '--url', served.url, '--model', 'served-model'];
    const r = await agents.run(['--format', 'plain', ...args, '--name', 'served', '--api-key-env', 'INIT_SERVER_KEY'], {
      code: 0,
    });
    assert.match(
      r.stderr,
      /not checked: INIT_SERVER_KEY is not set here, and the server reads it from its own environment \(try the actor with agents actor run\)/,
    );
    assert.equal(served.requests.length, 0, 'nothing was sent to the endpoint from here');
    const skipped = `on a server: ${repo} is not registered (the server's resources are its own paths; an administrator adds them with agents resource add)`;
    assert.ok(`${r.stdout}${r.stderr}`.includes(skipped), `${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stdout, /^actor\tlocal\/served\tadded\tserved-model$/m);
    assert.match(r.stdout, /^done\tagents chat$/m);
    assert.equal((await agents.ok(['project', 'list'])).items.length, 0, 'the server registered no project');

    // The default is this machine's; the turn runs on the server, with the server's key.
    served.push({ text: ['Hi from the served model.'] });
    const sent = await agents.run(['--format', 'plain', 'send', 'hello'], { code: 0 });
    assert.match(sent.stdout, /Hi from the served model\./);
    assert.equal(served.generations.at(-1)?.headers.authorization, `Bearer ${KEY}`);
  });

  it('with the key set here too, checks the endpoint from here as well', async () => {
    const data = await agents.ok(
      [
        'init',
        '--provider',
        'openai-compatible',
        '--url',
        served.url,
        '--model',
        'served-model',
        '--name',
        'served',
        '--api-key-env',
        'INIT_SERVER_KEY',
        '--no-project',
      ],
      { env: { INIT_SERVER_KEY: KEY } },
    );
    assert.equal(data.actor.action, 'unchanged', 're-running edits, never duplicates');
    assert.ok(
      served.requests.some((q) => q.path === '/v1/models'),
      'the endpoint was checked',
    );
  });
});

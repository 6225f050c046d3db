/**
 * The VS Code extension's core (everything but the vscode API) against a real `agents serve
 * --stdio`: the connection, chat with streaming, tool calls and approvals against the fake OpenAI
 * server, the agent dying and the next request starting a new one, and errors as the view shows them.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  actorRegistry,
  projectRegistry,
  resourceRegistry,
  StdioClientTransport,
} from '../../src/protocol/client/index.ts';
import { ChatController, type ChatEvent } from '../../clients/vscode/src/core/chat.ts';
import { agentCommand, Connection, type ConnectionState } from '../../clients/vscode/src/core/connection.ts';
import { errorView } from '../../clients/vscode/src/core/errors.ts';
import { startFakeOpenAI, createGate, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually, startHttpServer, TOKEN } from '../support/harness.ts';
import { connect, localTarget, tempRoot } from '../support/vscode-core.ts';
import { ECHO_FIRST_TURN_HINT as HINT } from '../../src/application/actors/echo.actor.ts';

const ROOT = tempRoot('agents-vscode-chat-');
const KEY = 'sk-vscode-0123456789abcdef';
let fake: FakeLlm;
let conn: Connection;
let repo: string;

const texts = (events: ChatEvent[], turnId?: string): string =>
  events
    .filter((e): e is Extract<ChatEvent, { type: 'text' }> => e.type === 'text' && (!turnId || e.turnId === turnId))
    .map((e) => e.text)
    .join('');

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  repo = join(ROOT, 'repo');
  initRepo(repo, { 'notes.txt': 'hello\n' });
  ({ conn } = connect(localTarget(join(ROOT, 'data'), { VSCODE_E2E_KEY: KEY })));
  const actor = (name: string): Record<string, unknown> => ({
    name,
    provider: 'openai-compatible',
    model: 'fake-model',
    baseUrl: fake.url,
    apiKeyEnv: 'VSCODE_E2E_KEY',
    tools: ['builtin/write-file'],
  });
  await conn.with(async (c) => {
    await c.call(actorRegistry.add, { definition: actor('local/writer') });
    await c.call(resourceRegistry.add, { definition: { name: 'local/chat', type: 'git-checkout', path: repo } });
    await c.call(projectRegistry.add, { definition: { name: 'local/chat', resources: ['local/chat'] } });
  });
});

after(async () => {
  await conn?.close();
  await fake?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

describe('the extension core: connection', () => {
  it('spawns the agent on stdio with the command and arguments it is given, and reports connected', async () => {
    const states: ConnectionState[] = [];
    const { conn: own, log: ownLog } = connect(localTarget(join(ROOT, 'own')));
    own.onState((s) => states.push(s));
    const client = await own.client();
    assert.ok(client.transport instanceof StdioClientTransport);
    assert.deepEqual(
      states.map((s) => s.kind),
      ['connecting', 'connected'],
    );
    assert.match(ownLog[0] ?? '', /serve --stdio --data-dir .*own$/);
    assert.equal(await own.client(), client, 'one connection while the agent lives');
    await own.close();
  });

  it('a bin script runs under node; a program runs as it is', () => {
    assert.deepEqual(agentCommand({ mode: 'local', agentPath: '/x/bin.js', node: '/n' }), {
      command: '/n',
      args: ['/x/bin.js', 'serve', '--stdio'],
    });
    assert.deepEqual(agentCommand({ mode: 'local', agentPath: 'agents', dataDir: '/d' }), {
      command: 'agents',
      args: ['serve', '--stdio', '--data-dir', '/d'],
    });
    assert.throws(() => agentCommand({ mode: 'local', agentPath: ' ' }), /cleveragents\.agentPath is empty/);
  });

  it('an agent program that does not exist fails with the setting to fix, and nothing crashes', async () => {
    const { conn: bad } = connect({ mode: 'local', agentPath: join(ROOT, 'no-such-agents') });
    const states: ConnectionState[] = [];
    bad.onState((s) => states.push(s));
    const events: ChatEvent[] = [];
    const chat = new ChatController(bad, (e) => events.push(e));
    assert.equal(await chat.send('hi'), false);
    const err = events.find((e) => e.type === 'error');
    assert.ok(err && err.type === 'error');
    assert.match(err.message, /could not start the agent process: .*ENOENT/);
    assert.match(err.hint ?? '', /cleveragents\.agentPath/);
    assert.equal(states.at(-1)?.kind, 'failed');
  });

  it('a server URL that is no URL is refused with an example', async () => {
    const { conn: bad } = connect({ mode: 'remote', url: 'not a url' });
    await assert.rejects(bad.client(), /cleveragents\.serverUrl is not a URL: not a url/);
    assert.match(errorView(await bad.client().catch((e: unknown) => e)).hint ?? '', /http:\/\/127\.0\.0\.1:8080/);
  });
});

describe('the extension core: chat', () => {
  it('streams the echo actor’s answer as text events of one artifact, then completed', async () => {
    const events: ChatEvent[] = [];
    const chat = new ChatController(conn, (e) => events.push(e));
    assert.equal(await chat.newSession({ actor: 'builtin/echo', title: 'from vscode' }), true);
    const session = events.find((e) => e.type === 'session');
    assert.ok(session && session.type === 'session');
    assert.equal(session.session.actor, 'builtin/echo');
    assert.equal(session.session.title, 'from vscode');
    assert.equal(await chat.send('hello there from the editor'), true);
    const user = events.find((e) => e.type === 'user');
    assert.ok(user && user.type === 'user');
    const chunks = events.filter((e) => e.type === 'text');
    assert.ok(chunks.length > 1, 'the answer came in several chunks');
    assert.equal(texts(events, user.turnId), `You said: hello there from the editor${HINT}`);
    assert.deepEqual(
      chunks.map((e) => e.type === 'text' && e.append),
      [false, ...chunks.slice(1).map(() => true)],
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'state').map((e) => e.type === 'state' && e.state),
      ['completed'],
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'busy').map((e) => e.type === 'busy' && e.busy),
      [true, false],
    );
  });

  it('each chunk reaches the view while the model still holds the rest', async () => {
    const gate = createGate();
    fake.push({ text: ['Hel', 'lo', ' there'], gate: gate.promise, holdAfter: 1 });
    let early = false;
    const events: ChatEvent[] = [];
    const chat = new ChatController(conn, (e) => {
      events.push(e);
      if (e.type === 'text' && e.text === 'Hel' && !early) {
        early = true;
        gate.release();
      }
    });
    await chat.newSession({ actor: 'local/writer' });
    assert.equal(await chat.send('hi'), true);
    assert.ok(early);
    assert.equal(texts(events), 'Hello there');
  });

  it('a tool call needing approval: approve runs it, and the tool call is shown as it runs', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"yes.txt","content":"yes\\n"}' }] },
      { text: ['Written.'] },
    );
    const events: ChatEvent[] = [];
    const chat = new ChatController(conn, (e) => events.push(e));
    await chat.newSession({ actor: 'local/writer', project: 'local/chat' });
    await chat.send('write yes.txt');
    const ask = events.find((e) => e.type === 'approval');
    assert.ok(ask && ask.type === 'approval', JSON.stringify(events));
    assert.equal(ask.tool, 'builtin/write-file');
    assert.match(ask.question, /^Allow builtin\/write-file .*path=yes\.txt/);
    assert.equal(ask.args, 'path=yes.txt');
    assert.ok(chat.awaitingApproval);
    assert.equal(existsSync(join(repo, 'yes.txt')), false, 'nothing written before the answer');

    assert.equal(await chat.answer('approve'), true);
    assert.equal(readFileSync(join(repo, 'yes.txt'), 'utf8'), 'yes\n');
    const tools = events.filter((e) => e.type === 'tool');
    assert.deepEqual(
      tools.map((e) => e.type === 'tool' && `${e.tool} ${e.state}`),
      ['builtin/write-file running', 'builtin/write-file done'],
    );
    assert.equal(texts(events), 'Written.');
    assert.ok(!chat.awaitingApproval);
    const sent = fake.requests.at(-1)?.body as { messages: Array<{ role: string }> };
    assert.equal(sent.messages.at(-1)?.role, 'tool', 'the tool result went back to the model');
  });

  it('reject with guidance: the file is not written and the model hears the guidance', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"no.txt","content":"no"}' }] },
      { text: ['Understood.'] },
    );
    const events: ChatEvent[] = [];
    const chat = new ChatController(conn, (e) => events.push(e));
    await chat.newSession({ actor: 'local/writer', project: 'local/chat' });
    await chat.send('write no.txt');
    assert.ok(chat.awaitingApproval);
    assert.equal(await chat.answer('reject', 'call it maybe.txt instead'), true);
    assert.equal(existsSync(join(repo, 'no.txt')), false);
    const tool = events.filter((e) => e.type === 'tool').at(-1);
    assert.ok(tool && tool.type === 'tool');
    assert.equal(tool.state, 'declined');
    assert.ok(JSON.stringify(fake.requests.at(-1)?.body).includes('call it maybe.txt instead'));
    assert.equal(texts(events), 'Understood.');
    assert.equal(await chat.answer('approve'), false, 'nothing waits any more');
    assert.match(JSON.stringify(events.at(-1)), /nothing waits for an approval/);
  });

  it('cancel ends a running turn canceled, and the chat takes the next message', async () => {
    fake.push({ hang: true }, { text: ['after the cancel'] });
    const events: ChatEvent[] = [];
    const chat = new ChatController(conn, (e) => events.push(e));
    await chat.newSession({ actor: 'local/writer' });
    const before = fake.requests.length;
    const sending = chat.send('this will hang');
    await eventually(async () => (fake.requests.length > before ? true : undefined), 10_000, 'the model request');
    assert.equal(await chat.send('too early'), false, 'one turn at a time');
    assert.match(JSON.stringify(events.at(-1)), /a turn is still running/);
    assert.equal(await chat.cancel(), true);
    await sending;
    assert.ok(
      events.some((e) => e.type === 'state' && e.state === 'canceled'),
      JSON.stringify(events),
    );
    assert.ok(!chat.busy);
    assert.equal(await chat.cancel(), false, 'nothing runs any more');
    assert.equal(await chat.send('again'), true);
    assert.equal(texts(events), 'after the cancel');
  });

  it('resume shows the last turns and goes on in the same session', async () => {
    const first: ChatEvent[] = [];
    const a = new ChatController(conn, (e) => first.push(e));
    await a.newSession({ actor: 'builtin/echo' });
    await a.send('remember me');
    const events: ChatEvent[] = [];
    const b = new ChatController(conn, (e) => events.push(e));
    assert.equal(await b.resume(a.sessionId), true);
    const s = events.find((e) => e.type === 'session');
    assert.ok(s && s.type === 'session');
    assert.equal(s.session.id, a.sessionId);
    assert.deepEqual(s.recap, [{ asked: 'remember me', answer: `You said: remember me${HINT}` }]);
    assert.ok((await b.sessions()).some((x) => x.id === a.sessionId));
  });

  it('a refused call shows the agent’s message and hint', async () => {
    const events: ChatEvent[] = [];
    const chat = new ChatController(conn, (e) => events.push(e));
    assert.equal(await chat.newSession({ actor: 'local/nobody' }), false);
    const err = events.at(-1);
    assert.ok(err && err.type === 'error');
    assert.match(err.message, /local\/nobody/);
    assert.equal(await chat.resume('no-such-session'), false);
    assert.match(JSON.stringify(events.at(-1)), /not found|no session/i);
  });

  it('a model failure is an error under its turn, with the hint', async () => {
    fake.push({ error: { status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided' } });
    const events: ChatEvent[] = [];
    const chat = new ChatController(conn, (e) => events.push(e));
    await chat.newSession({ actor: 'local/writer' });
    assert.equal(await chat.send('hi'), true);
    const err = events.find((e) => e.type === 'error');
    assert.ok(err && err.type === 'error' && err.turnId, JSON.stringify(events));
    assert.ok(err.hint, 'a hint comes with it');
  });

  it('the agent dying ends the turn with a clear error; the next message starts a new agent', async () => {
    const { conn: own, log: ownLog } = connect(localTarget(join(ROOT, 'dies')));
    const states: ConnectionState[] = [];
    own.onState((s) => states.push(s));
    const events: ChatEvent[] = [];
    const chat = new ChatController(own, (e) => events.push(e));
    await chat.newSession({ actor: 'builtin/echo' });
    const first = (await own.client()).transport as StdioClientTransport;
    process.kill(first.pid ?? 0, 'SIGKILL');
    await first.exited;
    assert.equal(states.at(-1)?.kind, 'exited');
    assert.match(JSON.stringify(states.at(-1)), /the agent process exited \(SIGKILL\)/);
    assert.ok(ownLog.some((l) => /the agent exited \(SIGKILL\)/.test(l)));

    assert.equal(await chat.send('are you back?'), true);
    const second = (await own.client()).transport as StdioClientTransport;
    assert.notEqual(second.pid, first.pid);
    assert.equal(texts(events), `You said: are you back?${HINT}`, 'the same session, on the new agent');
    assert.equal(states.at(-1)?.kind, 'connected');
    await own.close();
  });

  it('an agent killed in the middle of a turn: the turn says so, nothing throws', async () => {
    const { conn: own } = connect(localTarget(join(ROOT, 'dies-mid'), { VSCODE_E2E_KEY: KEY }));
    await own.with((c) =>
      c.call(actorRegistry.add, {
        definition: {
          name: 'local/slow',
          provider: 'openai-compatible',
          model: 'm',
          baseUrl: fake.url,
          apiKeyEnv: 'VSCODE_E2E_KEY',
        },
      }),
    );
    fake.push({ hang: true });
    const events: ChatEvent[] = [];
    const chat = new ChatController(own, (e) => events.push(e));
    await chat.newSession({ actor: 'local/slow' });
    const sending = chat.send('hang on');
    // The turn is under way once the model has the request; then the agent goes.
    await eventually(
      async () => (fake.requests.some((r) => JSON.stringify(r.body).includes('hang on')) ? true : undefined),
      10_000,
      'the model to have the request',
    );
    const c = await own.client();
    process.kill((c.transport as StdioClientTransport).pid ?? 0, 'SIGKILL');
    assert.equal(await sending, false);
    const err = events.find((e) => e.type === 'error');
    assert.ok(err && err.type === 'error');
    assert.match(err.message, /the agent process exited/);
    assert.match(err.hint ?? '', /started again on the next request/);
    assert.ok(!chat.busy);
    await own.close();
  });
});

describe('the extension core: server mode', () => {
  it('connects with the token, chats with streaming, and a wrong token is refused with its hint', async () => {
    const dataDir = join(ROOT, 'server');
    const server = await startHttpServer({ dataDir, env: localTarget(dataDir).env ?? {} });
    try {
      const { conn: remote } = connect({ mode: 'remote', url: `${server.baseUrl}/`, token: TOKEN });
      const events: ChatEvent[] = [];
      const chat = new ChatController(remote, (e) => events.push(e));
      await chat.newSession({ actor: 'builtin/echo' });
      assert.equal(await chat.send('over http'), true);
      assert.equal(texts(events), `You said: over http${HINT}`);
      assert.equal(remote.state.kind, 'connected');

      const { conn: wrong } = connect({ mode: 'remote', url: server.baseUrl, token: 'not-the-token-0123456789abcdef' });
      const states: ConnectionState[] = [];
      wrong.onState((s) => states.push(s));
      const refused: ChatEvent[] = [];
      assert.equal(await new ChatController(wrong, (e) => refused.push(e)).send('hi'), false);
      const err = refused.find((e) => e.type === 'error');
      assert.ok(err && err.type === 'error', JSON.stringify(refused));
      assert.match(err.message, /token|authenticat|key/i);
      assert.equal(states.at(-1)?.kind, 'failed');
    } finally {
      await server.stop();
    }
  });
});

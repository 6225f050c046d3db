/**
 * End to end: the built `agents acp` driven as an editor drives it — the ACP SDK's client side over
 * the child's stdio — against an LLM actor on the fake OpenAI server, in local mode and against
 * `agents serve`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  client as acpClient,
  ndJsonStream,
  RequestError,
  type ClientConnection,
  type RequestPermissionRequest,
  type SessionNotification,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';
import { agentsCli, BIN, cliEnv, collect, type Agents } from '../support/cli.ts';
import {
  createGate,
  startFakeOpenAI,
  type FakeLlm,
  type FakeReply,
  type RecordedRequest,
} from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually, startHttpServer, type HttpServerProcess } from '../support/harness.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-acp-e2e-'));
const KEY = 'sk-acp-0123456789abcdef';
const TOKEN = 'acp-e2e-token-0123456789abcdefgh';
const CONFIG = join(ROOT, 'no-config');

let fake: FakeLlm;
let repo: string;

const env = (dataDir: string): NodeJS.ProcessEnv => cliEnv(dataDir, CONFIG, { ACP_E2E_KEY: KEY });
/** A one-shot `agents` command on `dataDir`. */
const cliOn = (dataDir: string): Agents => agentsCli({ dataDir, configHome: CONFIG, env: { ACP_E2E_KEY: KEY } });

type PermissionChoice = 'allow_once' | 'reject_once' | 'allow_always' | 'hold';

/** A running `agents acp` and an ACP client connected to it, recording what it hears. */
interface Editor {
  child: ChildProcess;
  conn: ClientConnection;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  /** How the next permission requests are answered (`hold`: not until the prompt is cancelled). */
  choice: PermissionChoice;
  stdout(): string;
  stderr(): string;
  /** Writes a raw line to the bridge's stdin (malformed input). */
  raw(line: string): void;
  /** Closes stdin and waits for the exit code. */
  close(): Promise<number | null>;
}

function startEditor(args: string[], dataDir: string): Editor {
  const child = spawn(process.execPath, [BIN, 'acp', ...args], { env: env(dataDir), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        controller.enqueue(new Uint8Array(c));
      });
      child.stdout.on('end', () => controller.close());
    },
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const editor: Editor = {
    child,
    updates: [],
    permissions: [],
    choice: 'allow_once',
    conn: undefined as unknown as ClientConnection,
    stdout: () => out,
    stderr: () => err,
    raw: (line) => void child.stdin.write(`${line}\n`),
    close: async () => {
      child.stdin.end();
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
  const app = acpClient({ name: 'acp-e2e' })
    .onNotification('session/update', ({ params }) => void editor.updates.push(params))
    .onRequest('session/request_permission', async ({ params, signal }) => {
      editor.permissions.push(params);
      if (editor.choice === 'hold')
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      if (signal.aborted || editor.choice === 'hold') return { outcome: { outcome: 'cancelled' } };
      return { outcome: { outcome: 'selected', optionId: editor.choice } };
    });
  editor.conn = app.connect(
    ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, input, {
      maxMessageBytes: 8 * 1024 * 1024,
    }),
  );
  return editor;
}

const initialize = (e: Editor) =>
  e.conn.agent.request('initialize', {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
    clientInfo: { name: 'acp-e2e', version: '1.0.0' },
  });

const updatesOf = (e: Editor, sessionId: string): SessionUpdate[] =>
  e.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);

const textOf = (updates: SessionUpdate[], kind: 'agent_message_chunk' | 'user_message_chunk'): string =>
  updates.map((u) => (u.sessionUpdate === kind && u.content.type === 'text' ? u.content.text : '')).join('');

/** Every line the bridge wrote to stdout is a JSON-RPC 2.0 message. */
function assertOnlyFrames(e: Editor): void {
  const lines = e.stdout().split('\n').filter(Boolean);
  assert.ok(lines.length > 0);
  for (const line of lines) assert.equal((JSON.parse(line) as { jsonrpc?: string }).jsonrpc, '2.0', line);
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  repo = join(ROOT, 'repo');
  initRepo(repo, { 'notes.txt': 'the answer is 42\n' });
});

after(async () => {
  await fake?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

/** Registers local/gpt (reads and writes files) and the project local/acp on `repo`. */
async function register(dataDir: string, global: string[] = []): Promise<void> {
  const actor = join(ROOT, 'gpt.yaml');
  writeFileSync(
    actor,
    `name: local/gpt\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: ACP_E2E_KEY\ntools: [builtin/read-file, builtin/write-file]\n`,
  );
  await cliOn(dataDir).ok([...global, 'actor', 'add', '--config', actor]);
  const nokey = join(ROOT, 'nokey.yaml');
  writeFileSync(
    nokey,
    `name: local/nokey\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: ACP_E2E_NOPE\n`,
  );
  await cliOn(dataDir).ok([...global, 'actor', 'add', '--config', nokey]);
  await cliOn(dataDir).ok([...global, 'resource', 'add', 'git-checkout', 'local/acp', '--path', repo]);
  await cliOn(dataDir).ok([...global, 'project', 'create', 'local/acp', '--resource', 'local/acp']);
}

describe('agents acp (local mode)', () => {
  const data = join(ROOT, 'local');
  let editor: Editor;
  let sessionId: string;

  before(async () => {
    await register(data);
    editor = startEditor(['--actor', 'local/gpt'], data);
  });

  after(async () => {
    if (editor) await editor.close();
  });

  it('initialize: ACP v1, capabilities from the agent card, who it is, no authentication', async () => {
    const init = await initialize(editor);
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentInfo?.name, 'cleveragents');
    assert.match(init.agentInfo?.version ?? '', /^\d+\.\d+\.\d+/);
    assert.equal(init.agentCapabilities?.loadSession, true);
    assert.deepEqual(init.agentCapabilities?.sessionCapabilities, { list: {}, delete: {} });
    assert.deepEqual(init.agentCapabilities?.promptCapabilities, { image: false, audio: false, embeddedContext: true });
    assert.deepEqual(init.authMethods, []);
    assert.equal((init._meta?.['cleveragents'] as { mode?: string }).mode, 'local');
  });

  it('session/new in a registered project directory works on that project', async () => {
    const res = await editor.conn.agent.request('session/new', { cwd: repo, mcpServers: [] });
    sessionId = res.sessionId;
    const meta = res._meta?.['cleveragents'] as { session: { id: string; actor: string; project?: string } };
    assert.equal(meta.session.id, sessionId);
    assert.equal(meta.session.actor, 'local/gpt');
    assert.equal(meta.session.project, 'local/acp');
    const shown = await cliOn(data).ok(['session', 'show', sessionId]);
    assert.equal(shown.session.project, 'local/acp');
  });

  it('a prompt streams the answer and the tool call, and ends end_turn', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }] },
      { text: ['It ', 'says ', '42.'], usage: { input: 30, output: 4 } },
    );
    const before = editor.updates.length;
    const res = await editor.conn.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'what is in notes.txt?' }],
    });
    assert.equal(res.stopReason, 'end_turn');
    const updates = editor.updates.slice(before).map((u) => u.update);
    assert.equal(textOf(updates, 'agent_message_chunk'), 'It says 42.');
    assert.ok(updates.filter((u) => u.sessionUpdate === 'agent_message_chunk').length >= 3, 'streamed in chunks');
    const call = updates.find((u) => u.sessionUpdate === 'tool_call');
    assert.ok(call && call.sessionUpdate === 'tool_call');
    assert.equal(call.kind, 'read');
    assert.equal(call.status, 'in_progress');
    assert.equal(call.title, 'builtin/read-file path=notes.txt');
    assert.deepEqual(call.rawInput, { path: 'notes.txt' });
    assert.deepEqual(call.locations, [{ path: join(repo, 'notes.txt') }]);
    const done = updates.find((u) => u.sessionUpdate === 'tool_call_update');
    assert.ok(done && done.sessionUpdate === 'tool_call_update');
    assert.equal(done.toolCallId, call.toolCallId);
    assert.equal(done.status, 'completed');
    assert.match(JSON.stringify(done.content), /read notes\.txt/);
    const usage = (res._meta?.['cleveragents'] as { usage?: { outputTokens: number } }).usage;
    assert.equal(usage?.outputTokens, 4);
  });

  it("the chat's commands answer in the editor and end end_turn; none reaches the model", async () => {
    const asked = fake.generations.length;
    const cost = await promptIn(editor, sessionId, '/cost');
    assert.equal(cost.res.stopReason, 'end_turn');
    assert.match(cost.said, /^1 turn · \d+ in \/ 4 out tokens/);
    const listed = await promptIn(editor, sessionId, '/model');
    assert.match(listed.said, /The actor is local\/gpt\. Switch with \/model <name>[\s\S]*- local\/gpt \(current\)/);
    const switched = await promptIn(editor, sessionId, '/model nokey');
    assert.equal(switched.said, 'The next turns go to local/nokey.\n');
    assert.equal((await cliOn(data).ok(['session', 'show', sessionId])).session.actor, 'local/nokey');
    await promptIn(editor, sessionId, '/model local/gpt');
    const diff = await promptIn(editor, sessionId, '/diff');
    assert.match(diff.said, /No file changes in its turns of session/, 'no plan: the chat diff');
    const tools = await promptIn(editor, sessionId, '/tools');
    assert.match(tools.said, /builtin\/read-file/);
    const clear = await promptIn(editor, sessionId, '/clear');
    assert.match(clear.said, /^\/clear is not a command here\. A new session is started by the editor/);
    assert.equal(fake.generations.length, asked, 'nothing went to the model');
    await assert.rejects(
      editor.conn.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: '/model local/nosuch' }],
      }),
      (err: { message?: string }) => /local\/nosuch/.test(String(err.message)),
    );
  });

  it('a write asks permission; allow runs the tool and the prompt goes on', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"yes.txt","content":"yes\\n"}' }] },
      { text: ['Written.'] },
    );
    editor.choice = 'allow_once';
    const before = editor.updates.length;
    const asked = editor.permissions.length;
    const res = await editor.conn.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'write yes.txt' }],
    });
    assert.equal(res.stopReason, 'end_turn');
    const request = editor.permissions[asked];
    assert.ok(request);
    assert.equal(request.sessionId, sessionId);
    assert.equal(request.toolCall.title, 'builtin/write-file path=yes.txt');
    assert.equal(request.toolCall.kind, 'edit');
    assert.deepEqual(
      request.options.map((o) => o.kind),
      ['allow_once', 'allow_always', 'reject_once', 'reject_always'],
    );
    assert.equal(readFileSync(join(repo, 'yes.txt'), 'utf8'), 'yes\n');
    const updates = editor.updates.slice(before).map((u) => u.update);
    assert.equal(textOf(updates, 'agent_message_chunk'), 'Written.');
    const last = updates.filter((u) => u.sessionUpdate === 'tool_call_update').at(-1);
    assert.ok(last && last.sessionUpdate === 'tool_call_update');
    assert.equal(last.toolCallId, request.toolCall.toolCallId, 'the tool call the permission was about');
    assert.equal(last.status, 'completed');
  });

  it('reject: the tool does not run and the model is told', async () => {
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"no.txt","content":"no"}' }] },
      { text: ['Fine, not writing it.'] },
    );
    editor.choice = 'reject_once';
    const before = editor.updates.length;
    const res = await editor.conn.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'write no.txt' }],
    });
    assert.equal(res.stopReason, 'end_turn');
    assert.equal(existsSync(join(repo, 'no.txt')), false);
    const told = JSON.stringify((fake.generations.at(-1)?.body as { messages: unknown[] }).messages);
    assert.match(told, /The user declined this call; it did not run/);
    const updates = editor.updates.slice(before).map((u) => u.update);
    assert.equal(textOf(updates, 'agent_message_chunk'), 'Fine, not writing it.');
    const last = updates.filter((u) => u.sessionUpdate === 'tool_call_update').at(-1);
    assert.ok(last && last.sessionUpdate === 'tool_call_update');
    assert.equal(last.status, 'failed');
  });

  it('allow always: a later call of the same tool in the session is not asked again', async () => {
    editor.choice = 'allow_always';
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"a.txt","content":"a"}' }] },
      { text: ['a'] },
    );
    const asked = editor.permissions.length;
    await editor.conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write a' }] });
    assert.equal(editor.permissions.length, asked + 1);
    editor.choice = 'reject_once';
    fake.push(
      { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"b.txt","content":"b"}' }] },
      { text: ['b'] },
    );
    const res = await editor.conn.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'write b' }],
    });
    assert.equal(res.stopReason, 'end_turn');
    assert.equal(editor.permissions.length, asked + 1, 'not asked the second time');
    assert.equal(readFileSync(join(repo, 'b.txt'), 'utf8'), 'b');
  });

  it('session/cancel during a streamed answer: stopReason cancelled, the A2A task canceled', async () => {
    const gate = createGate();
    fake.push({ text: ['partial ', 'rest'], gate: gate.promise, holdAfter: 1 });
    const before = editor.updates.length;
    const pending = editor.conn.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'take your time' }],
    });
    await eventually(
      async () =>
        textOf(
          editor.updates.slice(before).map((u) => u.update),
          'agent_message_chunk',
        )
          ? true
          : undefined,
      15_000,
      'the first chunk',
    );
    await editor.conn.agent.notify('session/cancel', { sessionId });
    const res = await pending;
    gate.release();
    assert.equal(res.stopReason, 'cancelled');
    const shown = await cliOn(data).ok(['session', 'show', sessionId]);
    assert.equal(shown.tasks.at(-1).status.state, 'TASK_STATE_CANCELED');
  });

  it('session/cancel while a permission is pending: no tool runs, the prompt ends cancelled', async () => {
    // write-file is allowed "always" in the first session: a new one asks again.
    const fresh = (await editor.conn.agent.request('session/new', { cwd: repo, mcpServers: [] })).sessionId;
    editor.choice = 'hold';
    fake.push({ toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"held.txt","content":"x"}' }] });
    const asked = editor.permissions.length;
    const pending = editor.conn.agent.request('session/prompt', {
      sessionId: fresh,
      prompt: [{ type: 'text', text: 'write held.txt' }],
    });
    await eventually(async () => (editor.permissions.length > asked ? true : undefined), 15_000, 'the permission');
    await editor.conn.agent.notify('session/cancel', { sessionId: fresh });
    assert.equal((await pending).stopReason, 'cancelled');
    assert.equal(existsSync(join(repo, 'held.txt')), false);
    const shown = await cliOn(data).ok(['session', 'show', fresh]);
    assert.equal(shown.tasks.at(-1).status.state, 'TASK_STATE_CANCELED');
  });

  it('a refused request is an ACP error with the message and hint; malformed input gets errors; the bridge lives on', async () => {
    await assert.rejects(
      editor.conn.agent.request('session/new', {
        cwd: ROOT,
        mcpServers: [],
        _meta: { cleveragents: { actor: 'local/nope' } },
      }),
      (err: unknown) => {
        assert.ok(err instanceof RequestError);
        assert.equal(err.code, -32002);
        assert.match(err.message, /local\/nope/);
        return true;
      },
    );
    editor.raw('this is not json');
    editor.raw('{"jsonrpc":"2.0","id":"bad-1","method":"session/prompt","params":{"sessionId":7}}');
    editor.raw('{"jsonrpc":"2.0","id":"bad-2","method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}');
    const answers = await eventually(
      async () => {
        const lines = editor
          .stdout()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number; message: string } });
        const bad1 = lines.find((l) => l.id === 'bad-1');
        const bad2 = lines.find((l) => l.id === 'bad-2');
        const parse = lines.find((l) => l.error?.code === -32700);
        return bad1 && bad2 && parse ? { bad1, bad2 } : undefined;
      },
      10_000,
      'the error answers',
    );
    assert.equal(answers.bad1.error?.code, -32602);
    assert.equal(answers.bad2.error?.code, -32002);
    assert.match(answers.bad2.error?.message ?? '', /not open/);
    fake.push({ text: ['still here'] });
    const res = await editor.conn.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'are you there?' }],
    });
    assert.equal(res.stopReason, 'end_turn');
    assertOnlyFrames(editor);
  });

  it("a failed turn is an ACP error with the turn's message, hint and kind", async () => {
    const { sessionId: s } = await editor.conn.agent.request('session/new', {
      cwd: ROOT,
      mcpServers: [],
      _meta: { cleveragents: { actor: 'local/nokey' } },
    });
    await assert.rejects(
      editor.conn.agent.request('session/prompt', { sessionId: s, prompt: [{ type: 'text', text: 'hi' }] }),
      (err: unknown) => {
        assert.ok(err instanceof RequestError);
        assert.equal(err.code, -32603);
        assert.match(err.message, /No API key for local\/nokey/);
        const data = err.data as { kind?: string; hint?: string; taskId?: string };
        assert.equal(data.kind, 'auth');
        assert.match(data.hint ?? '', /ACP_E2E_NOPE/);
        assert.ok(data.taskId);
        return true;
      },
    );
  });

  it('session/load replays the turns (asked, answered, tool calls) in a new bridge', async () => {
    const other = startEditor([], data);
    try {
      await initialize(other);
      await other.conn.agent.request('session/load', { sessionId, cwd: repo, mcpServers: [] });
      const updates = updatesOf(other, sessionId);
      assert.match(textOf(updates, 'user_message_chunk'), /what is in notes\.txt\?/);
      assert.match(textOf(updates, 'agent_message_chunk'), /It says 42\./);
      const read = updates.find((u) => u.sessionUpdate === 'tool_call' && u.title.startsWith('builtin/read-file'));
      assert.ok(read && read.sessionUpdate === 'tool_call');
      assert.equal(read.status, 'completed');
      const commands = await eventually(
        async () => updatesOf(other, sessionId).find((u) => u.sessionUpdate === 'available_commands_update'),
        10_000,
        'the slash commands after session/load',
      );
      assert.ok(updatesOf(other, sessionId).indexOf(commands) > updates.indexOf(read), 'announced after the replay');
      fake.push({ text: ['loaded'] });
      const res = await other.conn.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text: 'and now?' }],
      });
      assert.equal(res.stopReason, 'end_turn');
    } finally {
      assert.equal(await other.close(), 0);
    }
    assertOnlyFrames(other);
  });

  it('a loaded session that waits for an approval shows the question; the next prompt answers it', async () => {
    fake.push({ toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"later.txt","content":"later"}' }] });
    // Without a terminal, a send that ends waiting for an approval exits 5 (ApprovalRequired).
    const asked = (
      await cliOn(data).json(['send', '--actor', 'local/gpt', '--project', 'acp', 'write later.txt'], { code: 5 })
    ).data;
    assert.equal(asked.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const waiting = asked.task.contextId as string;
    const other = startEditor([], data);
    try {
      await initialize(other);
      await other.conn.agent.request('session/load', { sessionId: waiting, cwd: repo, mcpServers: [] });
      assert.match(
        textOf(updatesOf(other, waiting), 'agent_message_chunk'),
        /Allow builtin\/write-file path=later\.txt\?/,
      );
      fake.push({ text: ['Written later.'] });
      const res = await other.conn.agent.request('session/prompt', {
        sessionId: waiting,
        prompt: [{ type: 'text', text: 'yes' }],
      });
      assert.equal(res.stopReason, 'end_turn');
      assert.equal(readFileSync(join(repo, 'later.txt'), 'utf8'), 'later');
    } finally {
      assert.equal(await other.close(), 0);
    }
  });

  it('session/list lists the sessions of a folder; session/delete deletes one', async () => {
    const listed = await editor.conn.agent.request('session/list', { cwd: repo });
    const mine = listed.sessions.find((s) => s.sessionId === sessionId);
    assert.equal(mine?.cwd, repo);
    assert.equal(mine?.title, 'local/gpt · local/acp');
    assert.ok(mine?.updatedAt);
    const elsewhere = await editor.conn.agent.request('session/list', { cwd: ROOT });
    assert.deepEqual(elsewhere.sessions, []);
    const { sessionId: doomed } = await editor.conn.agent.request('session/new', { cwd: repo, mcpServers: [] });
    await editor.conn.agent.request('session/delete', { sessionId: doomed });
    const after = await editor.conn.agent.request('session/list', { cwd: repo });
    assert.ok(!after.sessions.some((s) => s.sessionId === doomed));
    assert.ok(after.sessions.some((s) => s.sessionId === sessionId));
  });

  it('exits cleanly when the editor closes stdin', async () => {
    const e = startEditor([], data);
    await initialize(e);
    assert.equal(await e.close(), 0);
    assert.equal(e.stderr(), '');
  });

  it('a local agent that cannot start is reported to the request, with its own words', async () => {
    const notADir = join(ROOT, 'not-a-dir');
    writeFileSync(notADir, '');
    const e = startEditor(['--data-dir', join(notADir, 'data')], data);
    await assert.rejects(initialize(e), (err: unknown) => {
      assert.ok(err instanceof RequestError);
      assert.match(err.message, /not reachable: the agent process exited/);
      assert.match(err.message, /the data directory is not a directory/);
      assert.match(String((err.data as { hint?: string }).hint), /--verbose/);
      return true;
    });
    assert.equal(await e.close(), 0);
    assertOnlyFrames(e);
  });

  it('with --format json the envelope goes to stderr: stdout stays ACP only', async () => {
    const e = startEditor(['--format', 'json'], data);
    await initialize(e);
    assert.equal(await e.close(), 0);
    assertOnlyFrames(e);
    assert.equal((JSON.parse(e.stderr()) as { command: string; exitCode: number }).command, 'acp');
  });
});

// ---- plans from the editor: slash commands, plan entries, approvals, diff, apply ----------------

const BUGGY =
  "exports.parseDate = (s) => {\n  const [y, m, d] = s.split('-').map(Number);\n  return new Date(y, m, d);\n};\n";
const FIXED = BUGGY.replace('new Date(y, m, d)', 'new Date(y, m - 1, d)');

/** A model that plans (reads the file, submits two decisions) and executes (reads, edits, finishes). */
function planModel(req: RecordedRequest): FakeReply {
  const body = req.body as { tools?: Array<{ function: { name: string } }>; messages: Array<{ role: string }> };
  const tools = (body.tools ?? []).map((t) => t.function.name);
  const turns = body.messages.filter((m) => m.role === 'tool').length;
  const call = (name: string, args: unknown): FakeReply => ({
    toolCalls: [{ id: `call_${name.length}_${turns}`, name, arguments: JSON.stringify(args) }],
  });
  if (tools.includes('submit_strategy')) {
    if (turns === 0) return call('builtin__read', { path: 'src/date.js' });
    return call('submit_strategy', {
      approach: 'fix the month offset in src/date.js',
      rationale: 'months start at 0',
      confidence: 0.9,
      alternatives: [],
      decisions: [
        {
          question: 'Which file holds the bug?',
          chosen: 'src/date.js',
          alternatives: [],
          confidence: 0.9,
          rationale: 'parseDate is there',
        },
        {
          question: 'How to build the date?',
          chosen: 'new Date(y, m - 1, d)',
          alternatives: [],
          confidence: 0.9,
          rationale: 'zero-based months',
        },
      ],
    });
  }
  if (turns === 0) return call('builtin__read', { path: 'src/date.js' });
  if (turns === 1)
    return call('builtin__edit', {
      path: 'src/date.js',
      edits: [{ oldText: 'new Date(y, m, d)', newText: 'new Date(y, m - 1, d)' }],
    });
  return call(tools.find((n) => /finish/.test(n)) ?? 'finish', { done: true, assessment: 'fixed', confidence: 0.9 });
}

/** Sends a prompt; what the session heard meanwhile, and what was said. */
async function promptIn(editor: Editor, sessionId: string, text: string) {
  const before = editor.updates.length;
  const res = await editor.conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  const updates = editor.updates
    .slice(before)
    .filter((u) => u.sessionId === sessionId)
    .map((u) => u.update);
  return { res, updates, said: textOf(updates, 'agent_message_chunk') };
}

const planUpdates = (updates: SessionUpdate[]) =>
  updates.flatMap((u) => (u.sessionUpdate === 'plan' ? [u.entries] : []));

/** A git repo with the date bug, the actor local/planner on `llmUrl` and the project local/dates (builtin/manual) on it. */
async function registerPlans(dataDir: string, global: string[], llmUrl: string, planRepo: string) {
  const git = initRepo(planRepo, { 'src/date.js': BUGGY, 'README.md': '# dates\n' });
  const actor = join(ROOT, `planner-${global.length}.yaml`);
  writeFileSync(
    actor,
    `name: local/planner\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${llmUrl}\napiKeyEnv: ACP_E2E_KEY\n`,
  );
  await cliOn(dataDir).ok([...global, 'actor', 'add', '--config', actor]);
  await cliOn(dataDir).ok([...global, 'resource', 'add', 'git-checkout', 'local/dates', '--path', planRepo]);
  const project = join(ROOT, 'dates.project.yaml');
  // builtin/manual: every write of the execution asks, so an approval comes up while it runs.
  writeFileSync(
    project,
    'name: local/dates\nresources: [local/dates]\nsettings:\n  automationProfile: builtin/manual\n',
  );
  await cliOn(dataDir).ok([...global, 'project', 'add', '--config', project]);
  return git;
}

describe('agents acp: plans from slash commands (local mode)', () => {
  const data = join(ROOT, 'plans');
  const planRepo = join(ROOT, 'plan-repo');
  let llm: FakeLlm;
  let git: (...args: string[]) => string;
  let editor: Editor;
  let sessionId: string;

  const prompt = (text: string, id = sessionId) => promptIn(editor, id, text);
  const plans = planUpdates;

  before(async () => {
    llm = await startFakeOpenAI({ expectKey: KEY });
    llm.reply(planModel);
    git = await registerPlans(data, [], llm.url, planRepo);
    editor = startEditor(['--actor', 'local/planner'], data);
    await initialize(editor);
  });

  after(async () => {
    if (editor) await editor.close();
    await llm?.close();
  });

  it('session/new advertises the slash commands', async () => {
    sessionId = (await editor.conn.agent.request('session/new', { cwd: planRepo, mcpServers: [] })).sessionId;
    const cmds = await eventually(
      async () => {
        const u = updatesOf(editor, sessionId).find((x) => x.sessionUpdate === 'available_commands_update');
        return u?.sessionUpdate === 'available_commands_update' ? u.availableCommands : undefined;
      },
      10_000,
      'available_commands_update',
    );
    assert.deepEqual(
      cmds.map((c) => c.name),
      ['plan', 'execute', 'diff', 'apply', 'cancel', 'model', 'undo', 'compact', 'cost', 'tools', 'context'],
    );
    assert.ok(cmds.find((c) => c.name === 'plan')?.input?.hint);
  });

  it('an unknown slash command says which commands exist, and nothing goes to the actor', async () => {
    const asked = llm.generations.length;
    const { res, said } = await prompt('/frobnicate now');
    assert.equal(res.stopReason, 'end_turn');
    assert.match(
      said,
      /\/frobnicate is not a command here\. The commands are: \/plan <goal>, \/execute, \/diff \[turn\], \/apply, \/cancel, \/model \[actor\]/,
    );
    assert.equal(llm.generations.length, asked);
  });

  it('/plan in a session without a project is refused with a clear message; /execute without a plan too', async () => {
    const other = (await editor.conn.agent.request('session/new', { cwd: ROOT, mcpServers: [] })).sessionId;
    const planned = await prompt('/plan fix it', other);
    assert.equal(planned.res.stopReason, 'end_turn');
    assert.match(planned.said, /\/plan needs a project, and this session has none/);
    const executed = await prompt('/execute', other);
    assert.match(executed.said, /There is no plan in this session yet: start one with \/plan <goal>/);
  });

  it('/plan <goal> strategizes: the decisions stream as pending plan entries', async () => {
    const { res, updates, said } = await prompt('/plan fix the failing date parsing test');
    assert.equal(res.stopReason, 'end_turn');
    const entries = plans(updates).at(-1);
    assert.deepEqual(entries, [
      { content: 'Which file holds the bug? → src/date.js', priority: 'medium', status: 'pending' },
      { content: 'How to build the date? → new Date(y, m - 1, d)', priority: 'medium', status: 'pending' },
    ]);
    assert.match(said, /Plan \S+: strategize\/\w+/);
    assert.match(said, /is ready: \/execute runs it in a sandbox/);
    assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), BUGGY);
  });

  it('/execute: the write asks permission, allowed it runs; the entries move to completed', async () => {
    editor.choice = 'allow_once';
    const asked = editor.permissions.length;
    const { res, updates, said } = await prompt('/execute');
    assert.equal(res.stopReason, 'end_turn', said);
    const permission = editor.permissions.slice(asked).find((p) => p.sessionId === sessionId);
    assert.match(permission?.toolCall.title ?? '', /allow step \d+: builtin\/edit\?/);
    assert.deepEqual(
      permission?.options.map((o) => o.kind),
      ['allow_once', 'allow_always', 'reject_once'],
    );
    const seen = plans(updates);
    assert.ok(
      seen.some((e) => e.some((x) => x.status === 'in_progress')),
      'an entry was in progress',
    );
    assert.deepEqual(
      seen.at(-1)?.map((e) => e.status),
      ['completed', 'completed'],
    );
    assert.match(said, /Plan \S+: execute\/\w+/);
    assert.match(said, /executed: 1 file changed \(\+1 -1\)/);
    assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), BUGGY, 'the project is untouched before apply');
  });

  it('/diff: a tool call with diff content whose old and new text are the change', async () => {
    const { res, updates } = await prompt('/diff');
    assert.equal(res.stopReason, 'end_turn');
    const call = updates.find((u) => u.sessionUpdate === 'tool_call');
    assert.ok(call?.sessionUpdate === 'tool_call');
    assert.equal(call.status, 'completed');
    assert.deepEqual(call.content, [
      { type: 'diff', path: join(planRepo, 'src/date.js'), oldText: BUGGY, newText: FIXED },
    ]);
  });

  it('/apply rejected changes nothing; allowed (resuming an apply that waits), the commit lands in the project', async () => {
    const head = git('rev-parse', 'HEAD');
    editor.choice = 'reject_once';
    const rejected = await prompt('/apply');
    assert.equal(rejected.res.stopReason, 'end_turn');
    assert.match(rejected.said, /Not applied: plan \S+ stays ready to apply/);
    assert.equal(git('rev-parse', 'HEAD'), head);
    assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), BUGGY);

    // An apply started elsewhere (the CLI, not on a terminal) waits for its approval: /apply resumes it.
    const planId = (rejected.res._meta?.['cleveragents'] as { planId: string }).planId;
    const cli = spawn(process.execPath, [BIN, 'plan', 'apply', planId], {
      env: env(data),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cli.stdin.end();
    const waiting = await collect(cli, { timeoutMs: 30_000 });
    assert.notEqual(waiting.code, 0);
    assert.match(waiting.stderr, /needs approval for apply/);

    editor.choice = 'allow_once';
    const asked = editor.permissions.length;
    const applied = await prompt('/apply');
    assert.equal(applied.res.stopReason, 'end_turn', applied.said);
    assert.match(editor.permissions[asked]?.toolCall.title ?? '', /^Plan \S+: allow apply \(1 file\)\?$/);
    assert.equal(editor.permissions.length, asked + 1, 'asked once');
    const commit = git('rev-parse', 'HEAD');
    assert.notEqual(commit, head);
    assert.match(applied.said, new RegExp(`applied — local/dates: commit ${commit.slice(0, 7)}\\w* \\(1 file\\)`));
    assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), FIXED);
    git('reset', '-q', '--hard', head);
  });

  it('a step rejected in the editor is rejected in the plan (plan/reject): the write does not happen', async () => {
    await prompt('/plan fix the date parsing, carefully');
    editor.choice = 'reject_once';
    const asked = editor.permissions.length;
    const { res, updates } = await prompt('/execute');
    assert.equal(res.stopReason, 'end_turn');
    assert.equal(editor.permissions.length, asked + 1);
    const thoughts = updates.map((u) =>
      u.sessionUpdate === 'agent_thought_chunk' && u.content.type === 'text' ? u.content.text : '',
    );
    assert.match(thoughts.join(''), /rejected/i);
    const diff = await prompt('/diff');
    assert.match(diff.said, /has no changes yet/);
    assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), BUGGY);
  });

  it('a step allowed "always" in the editor is approved through the plan (plan/approve always): the write happens', async () => {
    await prompt('/plan fix the date parsing for good');
    editor.choice = 'allow_always';
    const asked = editor.permissions.length;
    const { res, said } = await prompt('/execute');
    assert.equal(res.stopReason, 'end_turn', said);
    assert.equal(editor.permissions.length, asked + 1, 'asked once');
    assert.equal(editor.permissions[asked]?.options.find((o) => o.kind === 'allow_always')?.optionId, 'allow_always');
    assert.match(said, /executed: 1 file changed \(\+1 -1\)/);
    assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), BUGGY, 'the project is untouched before apply');
  });

  it('session/cancel while a plan waits for an approval: the plan is cancelled, the prompt ends cancelled', async () => {
    await prompt('/plan fix the date parsing once more');
    editor.choice = 'hold';
    const asked = editor.permissions.length;
    const running = prompt('/execute');
    await eventually(async () => (editor.permissions.length > asked ? true : undefined), 30_000, 'the approval');
    await editor.conn.agent.notify('session/cancel', { sessionId });
    const { res } = await running;
    assert.equal(res.stopReason, 'cancelled');
    const planId = (res._meta?.['cleveragents'] as { planId: string }).planId;
    const status = await eventually(
      async () => {
        const s = await cliOn(data).ok(['plan', 'status', planId]);
        return s.state === 'cancelled' ? s : undefined;
      },
      10_000,
      'the plan cancelled',
    );
    assert.equal(status.state, 'cancelled');
    assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), BUGGY);
  });
});

describe('agents acp (server mode)', () => {
  const data = join(ROOT, 'server');
  let server: HttpServerProcess;
  const global = (): string[] => ['--server', server.baseUrl, '--token', TOKEN];

  before(async () => {
    server = await startHttpServer({ dataDir: data, token: TOKEN, env: { ...process.env, ACP_E2E_KEY: KEY } });
    await register(data, global());
  });

  after(async () => {
    await server?.stop();
  });

  it('talks to the server: a session in the cwd project, a tool call approved, the answer streamed', async () => {
    const e = startEditor([...global(), '--actor', 'gpt'], data);
    try {
      const init = await initialize(e);
      const meta = init._meta?.['cleveragents'] as { mode: string; server: string };
      assert.equal(meta.mode, 'server');
      assert.equal(meta.server, server.baseUrl);
      const { sessionId } = await e.conn.agent.request('session/new', { cwd: repo, mcpServers: [] });
      fake.push(
        { toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"server.txt","content":"s"}' }] },
        { text: ['Done ', 'remotely.'] },
      );
      e.choice = 'allow_once';
      const res = await e.conn.agent.request('session/prompt', {
        sessionId,
        prompt: [
          { type: 'text', text: 'write server.txt, see ' },
          { type: 'resource', resource: { uri: 'file:///spec.md', text: 'the spec' } },
        ],
      });
      assert.equal(res.stopReason, 'end_turn');
      assert.equal(textOf(updatesOf(e, sessionId), 'agent_message_chunk'), 'Done remotely.');
      assert.equal(readFileSync(join(repo, 'server.txt'), 'utf8'), 's');
      assert.equal(e.permissions.length, 1);
      const sent = JSON.stringify((fake.generations.at(-2)?.body as { messages: unknown[] }).messages);
      assert.match(sent, /Context from file:\/\/\/spec\.md/);
      assertOnlyFrames(e);
    } finally {
      assert.equal(await e.close(), 0);
    }
  });

  it('plans over the server: /plan streams entries, /execute asks and completes them, /apply commits', async () => {
    const llm = await startFakeOpenAI({ expectKey: KEY });
    llm.reply(planModel);
    const planRepo = join(ROOT, 'server-plan-repo');
    const git = await registerPlans(data, global(), llm.url, planRepo);
    const e = startEditor([...global(), '--actor', 'local/planner'], data);
    try {
      await initialize(e);
      e.choice = 'allow_once';
      const { sessionId } = await e.conn.agent.request('session/new', { cwd: planRepo, mcpServers: [] });
      const planned = await promptIn(e, sessionId, '/plan fix the failing date parsing test');
      assert.deepEqual(
        planUpdates(planned.updates)
          .at(-1)
          ?.map((x) => x.status),
        ['pending', 'pending'],
        planned.said,
      );
      const executed = await promptIn(e, sessionId, '/execute');
      assert.equal(e.permissions.length, 1, executed.said);
      assert.deepEqual(
        planUpdates(executed.updates)
          .at(-1)
          ?.map((x) => x.status),
        ['completed', 'completed'],
      );
      const head = git('rev-parse', 'HEAD');
      const applied = await promptIn(e, sessionId, '/apply');
      assert.notEqual(git('rev-parse', 'HEAD'), head, applied.said);
      assert.equal(readFileSync(join(planRepo, 'src/date.js'), 'utf8'), FIXED);
    } finally {
      assert.equal(await e.close(), 0);
      await llm.close();
    }
  });

  it('a wrong token: the refusal is an authentication error with a hint', async () => {
    const e = startEditor(['--server', server.baseUrl, '--token', 'not-the-token-0123456789abcdef'], data);
    try {
      await initialize(e).catch(() => undefined);
      await assert.rejects(e.conn.agent.request('session/new', { cwd: repo, mcpServers: [] }), (err: unknown) => {
        assert.ok(err instanceof RequestError);
        assert.equal(err.code, -32000);
        assert.ok((err.data as { hint?: string }).hint);
        return true;
      });
    } finally {
      assert.equal(await e.close(), 0);
    }
  });

  it('an unreachable server is reported to the request, and the bridge still exits cleanly', async () => {
    const e = startEditor(['--server', 'http://127.0.0.1:9', '--token', TOKEN], data);
    await assert.rejects(initialize(e), (err: unknown) => {
      assert.ok(err instanceof RequestError);
      assert.match(err.message, /not reachable/);
      assert.match(String((err.data as { hint?: string }).hint), /agents serve/);
      return true;
    });
    assert.equal(await e.close(), 0);
    assertOnlyFrames(e);
  });
});

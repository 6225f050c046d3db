/**
 * End to end: the built `agents` CLI as a user runs it — a real subprocess, no TTY — in local mode
 * (it spawns its own agent over stdio) and in server mode (HTTP to `agents serve`).
 */
import assert from 'node:assert/strict';
import { BIN, cliEnv as testCliEnv, collect, ownCallTrace, type CliResult } from '../support/cli.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { eventually, startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { ECHO_FIRST_TURN_HINT as HINT } from '../../src/application/actors/echo.actor.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-cli-e2e-'));
const TOKEN = 'e2e-token-0123456789abcdefghijkl'; // 32 characters

type Result = CliResult;

interface Envelope {
  command: string;
  status: 'ok' | 'error';
  exitCode: number;
  data: any;
  timing: { startedAt: string; durationMs: number };
  messages: Array<{ level: string; text: string }>;
}

/** The environment of every CLI run: isolated state and config, nothing inherited that changes the mode. */
const cliEnv = (dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv =>
  testCliEnv(dataDir, join(ROOT, 'no-config'), extra);

interface RunOptions {
  dataDir: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

function start(args: string[], opts: RunOptions): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(opts.dataDir, opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function finish(child: ChildProcess, opts: RunOptions, onStdout?: (all: string) => void): Promise<Result> {
  const result = collect(child, { timeoutMs: opts.timeoutMs ?? 20_000, ...(onStdout ? { onStdout } : {}) });
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  else child.stdin?.end();
  return result;
}

/** Runs `agents …` to the end. */
function run(args: string[], opts: RunOptions): Promise<Result> {
  return finish(start(args, opts), opts);
}

/** Runs `agents --format json …` and parses the one envelope it prints. */
async function runJson(args: string[], opts: RunOptions): Promise<{ env: Envelope; res: Result }> {
  const res = await run(['--format', 'json', ...args], opts);
  let env: Envelope;
  try {
    env = JSON.parse(res.stdout) as Envelope;
  } catch {
    throw new Error(`not one JSON envelope (exit ${res.code}):\n${res.stdout}\nstderr: ${res.stderr}`);
  }
  return { env, res };
}

/** Starts a long-lived CLI command and resolves once its stdout matches `ready`. */
function startUntil(
  args: string[],
  opts: RunOptions,
  ready: RegExp,
): { result: Promise<Result>; ready: Promise<void>; child: ChildProcess } {
  const child = start(args, opts);
  let signal!: () => void;
  const readyP = new Promise<void>((resolve) => (signal = resolve));
  const result = finish(child, opts, (all) => {
    if (ready.test(all)) signal();
  });
  return {
    result,
    ready: Promise.race([
      readyP,
      result.then((r) => Promise.reject(new Error(`ended before ready: ${JSON.stringify(r)}`))),
    ]),
    child,
  };
}

const artifactText = (task: { artifacts?: Array<{ parts: Array<{ text?: string }> }> }): string =>
  (task.artifacts ?? []).map((a) => a.parts.map((p) => p.text ?? '').join('')).join('\n');

function assertEnvelopeShape(env: Envelope, command: string, exitCode: number): void {
  assert.equal(env.command, command);
  assert.equal(env.exitCode, exitCode);
  assert.equal(env.status, exitCode === 0 ? 'ok' : 'error');
  assert.match(env.timing.startedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(
    Number.isInteger(env.timing.durationMs) && env.timing.durationMs >= 0,
    `durationMs ${env.timing.durationMs}`,
  );
  assert.ok(Array.isArray(env.messages));
}

after(() => rmSync(ROOT, { recursive: true, force: true }));

describe('agents CLI, local mode (spawns its own agent over stdio)', { concurrency: 4 }, () => {
  const dataDir = join(ROOT, 'local');
  const o = { dataDir };

  it('health prints the JSON envelope with the agent health', async () => {
    const { env, res } = await runJson(['health'], o);
    assert.equal(res.code, 0);
    assertEnvelopeShape(env, 'health', 0);
    assert.equal(env.data.status, 'ok');
    assert.equal(env.data.storage, 'ok');
    assert.match(env.data.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(env.messages, []);
  });

  it('send prints only the answer in plain mode, and the task in json mode', async () => {
    const plain = await run(['send', 'hello', 'world'], o);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, `You said: hello world${HINT}\n`);

    const { env } = await runJson(['send', 'hi there'], o);
    assertEnvelopeShape(env, 'send', 0);
    assert.equal(env.data.task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(artifactText(env.data.task), `You said: hi there${HINT}`);
    assert.equal(env.data.task.history[0].role, 'ROLE_USER');
  });

  it('send --stream prints the streamed answer; json keeps every event and the final task', async () => {
    const plain = await run(['send', '--stream', 'streamed words come in chunks'], o);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, `You said: streamed words come in chunks${HINT}\n`);

    const { env } = await runJson(['send', '--stream', 'one two three four five six'], o);
    assertEnvelopeShape(env, 'send', 0);
    const events = env.data.events as Array<{ seq: number; event: Record<string, unknown> }>;
    assert.ok('task' in events[0]!.event, 'the task snapshot comes first');
    assert.ok(events.filter((e) => 'artifactUpdate' in e.event).length >= 2, 'the answer arrives in several chunks');
    assert.equal(env.data.task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(artifactText(env.data.task), `You said: one two three four five six${HINT}`);
  });

  it('session create, list, show, send into it, delete — then it is gone (exit 3 with a hint)', async () => {
    const created = await runJson(['session', 'create', '--actor', 'builtin/echo', '--title', 'e2e round trip'], o);
    assertEnvelopeShape(created.env, 'session create', 0);
    const id = created.env.data.session.id as string;
    assert.equal(created.env.data.session.title, 'e2e round trip');

    const list = await run(['session', 'list', '--page-size', '100'], o);
    assert.equal(list.code, 0);
    const row = list.stdout.split('\n').find((l) => l.startsWith(`${id}\t`));
    assert.ok(row, `session ${id} is listed:\n${list.stdout}`);
    assert.deepEqual(row.split('\t').slice(1, 3), ['builtin/echo', '0']);

    const sent = await run(['send', '--session', id, 'inside the session'], o);
    assert.equal(sent.stdout, `You said: inside the session${HINT}\n`);

    const shown = await runJson(['session', 'show', id], o);
    assert.equal(shown.env.data.session.id, id);
    assert.equal(shown.env.data.tasks.length, 1);
    assert.equal(artifactText(shown.env.data.tasks[0]), `You said: inside the session${HINT}`);

    const deleted = await run(['session', 'delete', id], o);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, `deleted\t${id}\t1\n`);

    const gone = await run(['session', 'show', id], o);
    assert.equal(gone.code, 3);
    assert.match(gone.stderr, /not found/);
    assert.match(gone.stderr, /hint: .*agents session list/);
  });

  it('--context chooses what a new session gets of its files; a bad mode or one with --session is a usage error', async () => {
    const created = await runJson(['session', 'create', '--actor', 'builtin/echo', '--context', 'full'], o);
    assert.equal(created.res.code, 0, created.res.stderr);
    assert.equal(created.env.data.session.context, 'full');
    const shown = await run(['session', 'show', created.env.data.session.id as string], o);
    assert.match(shown.stdout, /^context mode: full$/m);
    const sent = await runJson(['send', '--actor', 'builtin/echo', '--context', 'map', 'hi'], o);
    assert.equal(sent.res.code, 0, sent.res.stderr);
    const session = await runJson(['session', 'show', sent.env.data.task.contextId as string], o);
    assert.equal(session.env.data.session.context, 'map');

    const bad = await run(['chat', '--context', 'everything'], o);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /option '--context <mode>' argument 'everything' is invalid\. must be one of map, full/);
    const both = await run(['send', '--session', created.env.data.session.id as string, '--context', 'map', 'x'], o);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--session cannot be combined with --actor, --project, --skill or --context/);
  });

  it('send --session with an unknown session is "not found" rather than a new session', async () => {
    const res = await run(['send', '--session', 'no-such-session', 'hello'], o);
    assert.equal(res.code, 3);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /ResourceNotFoundError/);
  });

  it('task get, list and cancel a conformance task that stays working', async () => {
    const sent = await runJson(['send', '--actor', 'builtin/conformance', 'please wait'], o);
    assert.equal(sent.res.code, 0, sent.res.stderr);
    const task = sent.env.data.task;
    assert.equal(task.status.state, 'TASK_STATE_WORKING');

    const got = await run(['task', 'get', task.id], o);
    assert.equal(got.code, 0);
    assert.match(got.stdout, new RegExp(`^id: ${task.id}\nstate: working\ncontext: ${task.contextId}\n`));

    const listed = await run(['task', 'list', '--context', task.contextId, '--status', 'working'], o);
    assert.equal(listed.code, 0);
    assert.deepEqual(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t').slice(0, 3)),
      [[task.id, 'working', task.contextId]],
    );

    const canceled = await run(['task', 'cancel', task.id], o);
    assert.equal(canceled.code, 0, canceled.stderr);
    assert.match(canceled.stdout, /^state: canceled$/m);

    const again = await runJson(['task', 'cancel', task.id], o);
    assertEnvelopeShape(again.env, 'task cancel', 5);
    assert.equal(again.env.data.error.type, 'TaskNotCancelableError');

    const history = await runJson(['task', 'get', task.id, '--history', '1'], o);
    assert.equal(history.env.data.task.status.state, 'TASK_STATE_CANCELED');
    assert.equal(history.env.data.task.history.length, 1);

    // Watching a task that already ended shows its final state; canceled exits 9.
    const watched = await run(['task', 'watch', task.id], o);
    assert.equal(watched.code, 9);
    assert.match(watched.stdout, /^state: canceled$/m);
  });

  it('send --no-wait returns the accepted task at once', async () => {
    const { env, res } = await runJson(['send', '--no-wait', '--actor', 'builtin/conformance', 'later'], o);
    assert.equal(res.code, 0, res.stderr);
    assert.match(env.data.task.id, /^[0-9A-Z]{26}$/);
    assert.ok(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(env.data.task.status.state));
  });

  it('chat reads piped lines, streams each answer, and ends at EOF', async () => {
    const res = await run(['chat'], { ...o, input: 'first line\nsecond line\n' });
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.split('\n');
    const session = /^session: (\S+)$/.exec(lines[0] ?? '')?.[1];
    assert.ok(session, res.stdout);
    assert.deepEqual(lines.slice(1), [
      '> first line',
      ...`You said: first line${HINT}`.split('\n'),
      '> second line',
      'You said: second line',
      '',
    ]);

    const shown = await runJson(['session', 'show', session], o);
    assert.deepEqual(
      shown.env.data.tasks.map((t: { artifacts?: Array<{ parts: Array<{ text?: string }> }> }) => artifactText(t)),
      [`You said: first line${HINT}`, 'You said: second line'],
    );
  });

  it('chat stops at /exit and keeps the session id in its json envelope', async () => {
    const { env, res } = await runJson(['chat', '--actor', 'builtin/echo'], {
      ...o,
      input: 'only this\n/exit\nnever sent\n',
    });
    assert.equal(res.code, 0, res.stderr);
    assertEnvelopeShape(env, 'chat', 0);
    assert.match(env.data.session.id, /^[0-9A-Z]{26}$/);
    assert.deepEqual(
      env.data.turns.map((t: { input: string }) => t.input),
      ['only this'],
    );
    assert.equal(artifactText(env.data.turns[0].task), `You said: only this${HINT}`);
  });

  it('card shows the Agent Card from the stdio handshake', async () => {
    const plain = await run(['card'], o);
    assert.equal(plain.code, 0);
    assert.match(plain.stdout, /^name: CleverAgents$/m);
    assert.match(plain.stdout, /^extensions: .*urn:cleveragents:extensions:v1/m);
    const { env } = await runJson(['card'], o);
    assert.equal(env.data.card.name, 'CleverAgents');
    assert.equal(env.data.card.capabilities.streaming, true);
  });

  it('diagnostics lists its checks and exits 0 when none fails', async () => {
    const { env, res } = await runJson(['diagnostics'], o);
    assert.equal(res.code, 0);
    assert.ok(env.data.checks.length > 0);
    assert.ok(env.data.checks.every((c: { status: string }) => c.status !== 'fail'));
    const plain = await run(['diagnostics'], o);
    assert.match(plain.stdout, /^ok\tstorage\tdatabase reachable\t/m);
    const confinement = env.data.checks.find((c: { name: string }) => c.name === 'command confinement');
    assert.ok(confinement, 'diagnostics reports how commands run');
    assert.match(confinement.detail, /^bubblewrap \(/);
  });

  it('an unknown task id exits 3: reason and hint on stderr, error envelope in json', async () => {
    const plain = await run(['task', 'get', 'no-such-task'], o);
    assert.equal(plain.code, 3);
    assert.equal(plain.stdout, '');
    assert.match(plain.stderr, /^error: Task no-such-task was not found \(TaskNotFoundError\)$/m);
    assert.match(plain.stderr, /^hint: .*agents task list/m);

    const { env } = await runJson(['task', 'get', 'no-such-task'], o);
    assertEnvelopeShape(env, 'task get', 3);
    assert.equal(env.data.error.type, 'TaskNotFoundError');
    assert.equal(env.data.error.code, -32001);
    assert.ok(env.data.error.correlationId);
    assert.deepEqual(
      env.messages.map((m) => m.level),
      ['error', 'hint'],
    );
  });

  it('invalid params from the agent exit 7 and name the field', async () => {
    const res = await run(['session', 'create', '--actor', 'Not A Name'], o);
    assert.equal(res.code, 7);
    assert.match(res.stderr, /^field: actor: /m);
  });

  it('bad flags and arguments are usage errors (exit 2), with an envelope in json mode', async () => {
    const unknown = await run(['send', '--bogus', 'x'], o);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown option '--bogus'/);

    const badChoice = await runJson(['task', 'list', '--status', 'sleeping'], o);
    assert.equal(badChoice.res.code, 2);
    assertEnvelopeShape(badChoice.env, 'task list', 2);
    assert.equal(badChoice.env.data.error.type, 'UsageError');

    const badNumber = await run(['task', 'list', '--page-size', 'lots'], o);
    assert.equal(badNumber.code, 2);
    const nothing = await run([], o);
    assert.equal(nothing.code, 2);
  });

  it('--format yaml prints one YAML envelope', async () => {
    const res = await run(['--format', 'yaml', 'session', 'list'], o);
    assert.equal(res.code, 0);
    const env = parseYaml(res.stdout) as Envelope;
    assertEnvelopeShape(env, 'session list', 0);
    assert.ok(Array.isArray(env.data.sessions));
  });

  it('Ctrl-C during task watch cancels the request, stops the agent and exits 130', async () => {
    const sent = await runJson(['send', '--actor', 'builtin/conformance', 'interrupt me'], o);
    const watch = startUntil(['task', 'watch', sent.env.data.task.id], o, /\ttask\t/);
    await watch.ready;
    watch.child.kill('SIGINT');
    const res = await watch.result;
    assert.equal(res.code, 130);
    assert.match(res.stderr, /interrupted/);
  });

  it('the config file sets the format; a flag beats it', async () => {
    const cfg = join(ROOT, 'config-format');
    mkdirSync(join(cfg, 'cleveragents'), { recursive: true });
    writeFileSync(join(cfg, 'cleveragents', 'config.yaml'), 'format: yaml\n');
    const fromConfig = await run(['health'], { ...o, env: { XDG_CONFIG_HOME: cfg } });
    assert.equal((parseYaml(fromConfig.stdout) as Envelope).command, 'health');
    const flag = await runJson(['health'], { ...o, env: { XDG_CONFIG_HOME: cfg } });
    assert.equal(flag.env.data.status, 'ok');
  });
});

describe('agents CLI, server mode (HTTP to agents serve)', { concurrency: 4 }, () => {
  const dataDir = join(ROOT, 'server');
  const clientDir = join(ROOT, 'client-unused');
  let server: HttpServerProcess;
  let url = '';
  const o = { dataDir: clientDir };
  const remote = (...args: string[]): string[] => ['--server', url, '--token', TOKEN, ...args];

  before(async () => {
    server = await startHttpServer({ dataDir, env: cliEnv(dataDir), token: TOKEN });
    url = server.baseUrl;
  });

  after(() => server.stop());

  it('send and send --stream reach the server', async () => {
    const [plain, streamed] = await Promise.all([
      run(remote('send', 'over http'), o),
      run(remote('send', '--stream', 'over sse'), o),
    ]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, `You said: over http${HINT}\n`);
    assert.equal(streamed.code, 0, streamed.stderr);
    assert.equal(streamed.stdout, `You said: over sse${HINT}\n`);
  });

  it('task list shows the tasks the server holds', async () => {
    const sent = await runJson(remote('send', 'listed'), o);
    const { env, res } = await runJson(remote('task', 'list', '--page-size', '100'), o);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(env.data.tasks.some((t: { id: string }) => t.id === sent.env.data.task.id));
  });

  it('health works with the server URL and token from the environment', async () => {
    const { env, res } = await runJson(['health'], {
      ...o,
      env: { CLEVERAGENTS_SERVER_URL: url, CLEVERAGENTS_SERVER_TOKEN: TOKEN },
    });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(env.data.status, 'ok');
  });

  it('the config file can name the server and token', async () => {
    const cfg = join(ROOT, 'config-server');
    mkdirSync(join(cfg, 'cleveragents'), { recursive: true });
    writeFileSync(join(cfg, 'cleveragents', 'config.yaml'), `server: ${url}\ntoken: ${TOKEN}\n`);
    const res = await run(['health'], { ...o, env: { XDG_CONFIG_HOME: cfg } });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^status: ok$/m);
  });

  it('a wrong token exits 4', async () => {
    const res = await run(['--server', url, '--token', 'x'.repeat(32), 'task', 'list'], o);
    assert.equal(res.code, 4);
    assert.match(res.stderr, /AuthenticationError/);
    const { env } = await runJson(['--server', url, 'health'], o);
    assertEnvelopeShape(env, 'health', 4);
  });

  it('an unreachable server exits 6', async () => {
    const res = await run(['--server', 'http://127.0.0.1:1', 'health'], o);
    assert.equal(res.code, 6);
    assert.match(res.stderr, /hint: /);
  });

  it('task watch follows a task live until another client cancels it (exit 9)', async () => {
    const sent = await runJson(remote('send', '--actor', 'builtin/conformance', 'watch me'), o);
    const id = sent.env.data.task.id as string;
    const watch = startUntil(remote('task', 'watch', id), o, /\ttask\t/);
    await watch.ready;
    const canceled = await run(remote('task', 'cancel', id), o);
    assert.equal(canceled.code, 0, canceled.stderr);
    const res = await watch.result;
    assert.equal(res.code, 9, res.stderr);
    const lines = res.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', new RegExp(`^\\d+\ttask\t${id}\tworking$`));
    assert.match(lines.at(-1) ?? '', /^\d+\tstatus\tcanceled\t/);
  });

  it('task watch --format json collects the events into the envelope', async () => {
    const sent = await runJson(remote('send', '--actor', 'builtin/conformance', 'watch me too'), o);
    const id = sent.env.data.task.id as string;
    // The envelope comes only at the end, so there is no output to wait for: the watch's own call
    // trace says when it has asked to subscribe.
    const trace = ownCallTrace();
    const child = start(['--format', 'json', ...remote('task', 'watch', id)], { ...o, env: trace.env });
    const result = finish(child, o);
    await eventually(
      async () => (trace.called('task watch', 'SubscribeToTask') ? true : undefined),
      15_000,
      'the watch',
    );
    await run(remote('task', 'cancel', id), o);
    const res = await result;
    const env = JSON.parse(res.stdout) as Envelope;
    assertEnvelopeShape(env, 'task watch', 9);
    assert.equal(env.data.task.status.state, 'TASK_STATE_CANCELED');
    assert.ok(Array.isArray(env.data.events));
  });
});

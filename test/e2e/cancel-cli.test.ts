/**
 * End to end: Ctrl-C cancels the running turn (issue 37, "Cancellation is immediate"). The
 * provider is the fake OpenAI server holding its answer after the first chunk; Ctrl-C is SIGINT
 * sent to the CLI's whole process group, as a terminal sends it. What must hold: the provider's
 * request is hung up on, the task is stored canceled with what was streamed so far, the CLI says
 * "canceled" and exits 130 — in local mode (a spawned agent) and against `agents serve`. `chat`
 * runs in a real terminal (tmux): Ctrl-C and Esc cancel the turn and the prompt comes back; Ctrl-C
 * at the empty prompt leaves.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, BIN, cliEnv, collect, type Agents } from '../support/cli.ts';
import { createGate, startFakeOpenAI, type FakeLlm, type RecordedRequest } from '../support/fake-llm.ts';
import { eventually } from '../support/harness.ts';
import { e2eRoot, localMode, serverMode } from '../support/modes.ts';

const ROOT = e2eRoot('agents-cancel-e2e');
const KEY = 'sk-cancel-e2e-0123456789abcdef';
const SOCKET = `ca-cancel-e2e-${process.pid}`;
/** A long answer: the fake sends its first word, then holds the rest until the test's gate opens. */
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i} `);

let fake: FakeLlm;

const ENV = { CANCEL_E2E_KEY: KEY };

/** The text of a task's artifacts. */
const answerOf = (task: any): string =>
  (task.artifacts ?? [])
    .flatMap((a: any) => a.parts ?? [])
    .map((p: any) => p.text ?? '')
    .join('');

/** The generation request the provider got after `before` requests. */
const generation = (before: number): Promise<RecordedRequest> =>
  eventually(() => Promise.resolve(fake.generations[before]), 10_000, 'the request to the provider');

function actorFile(name: string): string {
  const f = join(ROOT, `${name}.yaml`);
  writeFileSync(
    f,
    `name: local/${name}\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: CANCEL_E2E_KEY\n`,
  );
  return f;
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
});

after(async () => {
  try {
    execFileSync('tmux', ['-L', SOCKET, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // no tmux server was started
  }
  await fake?.close();
});

/** The checks every mode shares: the CLI's output and exit, the provider hung up on, the task stored canceled. */
async function interruptedSend(cli: Agents, stream: boolean): Promise<void> {
  const { session } = (await cli.ok(['session', 'create', '--actor', 'local/slow'])) as {
    session: { id: string };
  };
  const gate = createGate();
  fake.push({ text: WORDS, gate: gate.promise, holdAfter: 1 });
  const sent = fake.generations.length;
  try {
    // The CLI as a terminal's foreground job: a process group of its own, so that the SIGINT below
    // reaches the whole group as a terminal's Ctrl-C does (a local agent left in it would get it too).
    const child = cli.spawn(['send', '--session', session.id, ...(stream ? ['--stream'] : []), 'talk to me'], {
      detached: true,
    });
    child.stdin?.end();
    let printed = false;
    const result = collect(child, { timeoutMs: 30_000, onStdout: (all) => (printed ||= all.includes('w0')) });
    const req = await generation(sent);
    // The first word is stored (streamed: printed, which follows its storing) before Ctrl-C.
    await eventually(
      async () => {
        if (stream) return printed || undefined;
        const id = (await cli.ok(['task', 'list', '--context', session.id])).tasks[0]?.id as string;
        return (id && answerOf((await cli.ok(['task', 'get', id])).task).includes('w0')) || undefined;
      },
      15_000,
      'the first word stored',
    );
    process.kill(-(child.pid as number), 'SIGINT');
    const res = await result;
    assert.equal(res.code, 130, `Ctrl-C exits 130: ${res.stdout}\n${res.stderr}`);
    assert.match(res.stdout, /^w0 /, 'what came so far is printed');
    assert.doesNotMatch(res.stdout, /w59/, 'the answer stopped');
    assert.match(res.stderr, /^task \S+ canceled$/m, 'one line says the turn was canceled');
    assert.doesNotMatch(res.stderr, /interrupted|error/i, `${res.stderr}`);
    await req.closed;
    assert.equal(req.aborted, true, 'the provider request was aborted, not finished');
    const tasks = await cli.ok(['task', 'list', '--context', session.id]);
    const { task } = await cli.ok(['task', 'get', tasks.tasks[0].id as string]);
    assert.equal(task.status.state, 'TASK_STATE_CANCELED');
    assert.match(answerOf(task), /^w0 /, 'the partial answer is kept');
    assert.doesNotMatch(answerOf(task), /w59/);
  } finally {
    gate.release();
  }
}

describe('Ctrl-C in agents send (local mode)', () => {
  const { cli } = localMode({ root: ROOT, env: ENV });

  before(async () => {
    const res = await cli.run(['actor', 'add', '--config', actorFile('slow')]);
    assert.equal(res.code, 0, res.stderr);
  });

  it('send --stream: cancels the turn, keeps what was streamed, hangs up on the provider, exits 130', () =>
    interruptedSend(cli, true));

  it('send (waiting for the answer): the same, with the partial answer printed', () => interruptedSend(cli, false));
});

describe('Ctrl-C in agents send (server mode)', () => {
  const { cli } = serverMode({ root: ROOT, env: ENV });

  before(async () => {
    const res = await cli.run(['actor', 'add', '--config', actorFile('slow')]);
    assert.equal(res.code, 0, res.stderr);
  });

  it('send --stream: the server cancels the turn and hangs up on the provider', () => interruptedSend(cli, true));

  it('send: the same without streaming', () => interruptedSend(cli, false));
});

describe('Ctrl-C and Esc in agents chat (a terminal)', () => {
  const data = join(ROOT, 'chat');
  const cli = agentsCli({ dataDir: data, configHome: join(ROOT, 'no-config'), env: ENV });
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
  const screen = (): string => tmux('capture-pane', '-p', '-t', 'chat');
  const see = (re: RegExp, ms = 20_000): Promise<string> =>
    eventually(() => Promise.resolve(re.test(screen()) ? screen() : undefined), ms, String(re)).catch((err: Error) => {
      throw new Error(`${err.message}; the screen:\n${screen()}`);
    });
  const quote = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;

  before(async () => {
    const res = await cli.run(['actor', 'add', '--config', actorFile('slow')]);
    assert.equal(res.code, 0, res.stderr);
  });

  it('cancels the running turn and stays; Ctrl-C at the empty prompt leaves', async () => {
    const exports = Object.entries(cliEnv(data, cli.configHome, ENV))
      .filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !['TERM', 'TMUX'].includes(k))
      .map(([k, v]) => `export ${k}=${quote(v ?? '')}`);
    const script = join(ROOT, 'chat.sh');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        ...exports,
        `${quote(process.execPath)} ${quote(BIN)} chat --actor local/slow`,
        'echo "EXIT:$?"',
        'exec sleep 600',
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    const gates = [createGate(), createGate()];
    try {
      tmux('new-session', '-d', '-s', 'chat', '-x', '120', '-y', '40', script);
      await see(/you ›\s*$/m);
      for (const [i, key] of (['C-c', 'Escape'] as const).entries()) {
        const sent = fake.generations.length;
        fake.push({ text: WORDS, gate: (gates[i] ?? createGate()).promise, holdAfter: 1 });
        tmux('send-keys', '-t', 'chat', '-l', `turn ${i}`);
        tmux('send-keys', '-t', 'chat', 'Enter');
        const req = await generation(sent);
        await see(new RegExp(`turn ${i}\\n(?:.*\\n)*?.*w0`));
        tmux('send-keys', '-t', 'chat', key);
        await see(new RegExp(`task \\S+ · canceled · session \\S+\\n(?:.*\\n)*?you ›\\s*$`, 'm'));
        await req.closed;
        assert.equal(req.aborted, true, `${key}: the provider request was aborted`);
      }
      assert.doesNotMatch(screen(), /w59|EXIT:/, 'the answers stopped and the chat went on');
      tmux('send-keys', '-t', 'chat', 'C-c');
      const left = await see(/EXIT:\d+/);
      assert.match(left, /EXIT:130/);
      const tasks = await cli.ok(['task', 'list', '--status', 'canceled']);
      assert.equal(tasks.tasks.length, 2, 'both turns were stored canceled');
      for (const t of tasks.tasks) {
        const { task } = await cli.ok(['task', 'get', t.id as string]);
        assert.match(answerOf(task), /^w0 /, 'each keeps its partial answer');
      }
    } finally {
      for (const g of gates) g.release();
    }
  });
});

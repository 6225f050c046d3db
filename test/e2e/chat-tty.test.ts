/**
 * End to end: `agents chat` in a real terminal (tmux), with an LLM actor (the fake
 * OpenAI-compatible server) on a project in git. One chat, as a person has it: `/help`, a
 * message with `@file` (the model gets the file), a turn that edits a file and stops for the
 * approval, answered in place with `y`, `/undo` putting the file back, `/cost`, `/model` switching
 * the next turns to another actor, Esc during a slow answer (the turn stops, the chat goes on and
 * the next line works), a trailing `\`, a bracketed paste, and Tab completing `@paths` and
 * `/commands`. The same chat runs in local mode (the CLI spawns its agent) and against
 * `agents serve` on 127.0.0.1 (HTTP+SSE; the key is in the server's environment only, and the
 * server, on this machine, works on the same repository).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, BIN, cliEnv } from '../support/cli.ts';
import { createGate, startFakeOpenAI, type FakeLlm, type RecordedRequest } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually, startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { e2eRoot } from '../support/modes.ts';
import { shellQuote, terminalScript, tmuxOn } from '../support/terminal.ts';

const ROOT = e2eRoot('agents-chat-tty-e2e');
const KEY = 'sk-chat-tty-e2e-0123456789abcdef';
const SOCKET = `ca-chat-tty-e2e-${process.pid}`;
const ENV = { CHAT_TTY_E2E_KEY: KEY };
const REPO = join(ROOT, 'repo');
const DATA = join(ROOT, 'data');
const SERVER_TOKEN = 'chat-tty-e2e-token-0123456789abcdef';
/** A long answer, its first line whole (answers show line by line): the rest held until the gate opens. */
const WORDS = ['w0\n', ...Array.from({ length: 59 }, (_, i) => `w${i + 1} `)];

let fake: FakeLlm;
let server: HttpServerProcess | undefined;
const local = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'config'), env: ENV });
/** The CLI against the server: its key is in the server's environment, not the CLI's. */
const remote = agentsCli({
  dataDir: join(ROOT, 'client'),
  configHome: join(ROOT, 'client-config'),
  prefix: () => ['--server', server?.baseUrl ?? 'http://127.0.0.1:9', '--token', SERVER_TOKEN],
});
/** The tmux session of the mode under test. */
let pane = 'chat';
const tmux = tmuxOn(SOCKET, { joined: true });
const screen = (): string => tmux.screen(pane);
const see = (re: RegExp, ms = 20_000): Promise<string> => tmux.see(pane, re, ms);
const type = (line: string): void => {
  tmux('send-keys', '-t', pane, '-l', line);
  tmux('send-keys', '-t', pane, 'Enter');
};
/**
 * Presses Tab until the screen shows `re`: readline drops a Tab that comes while the previous
 * completion (async: it may read the file system) is still running, so two quick Tabs may list nothing.
 */
const tabUntil = async (re: RegExp): Promise<string> => {
  for (let i = 0; i < 20 && !re.test(screen()); i++) {
    tmux('send-keys', '-t', pane, 'Tab');
    await eventually(() => Promise.resolve(re.test(screen()) || undefined), 1000, String(re)).catch(() => undefined);
  }
  return see(re);
};
const generation = (n: number): Promise<RecordedRequest> =>
  eventually(() => Promise.resolve(fake.generations[n]), 10_000, 'the request to the provider');
/** What the last user message of a request to the provider said. */
const lastUser = (r: RecordedRequest): string => {
  const m = (r.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  return JSON.stringify(m.filter((x) => x.role === 'user').at(-1)?.content ?? '');
};

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  initRepo(REPO, { 'greet.txt': 'hello world\n', 'note.txt': 'the secret word is aubergine\n' });
  const serverData = join(ROOT, 'server');
  server = await startHttpServer({
    dataDir: serverData,
    token: SERVER_TOKEN,
    env: cliEnv(serverData, join(ROOT, 'server-config'), ENV),
  });
  const actor = join(ROOT, 'coder.yaml');
  writeFileSync(
    actor,
    `name: local/coder\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: CHAT_TTY_E2E_KEY\nprices: { inputPerMillion: 3, outputPerMillion: 15 }\n`,
  );
  const other = join(ROOT, 'other.yaml');
  writeFileSync(
    other,
    `name: local/other\nprovider: openai-compatible\nmodel: other-model\nbaseUrl: ${fake.url}\napiKeyEnv: CHAT_TTY_E2E_KEY\n`,
  );
  for (const args of [
    ['actor', 'add', '--config', actor],
    ['actor', 'add', '--config', other],
    ['resource', 'add', 'git-checkout', 'local/repo', '--path', REPO],
    ['project', 'create', 'local/repo', '--resource', 'local/repo'],
  ])
    for (const cli of [local, remote]) await cli.run(args, { code: 0 });
});

after(async () => {
  try {
    execFileSync('tmux', ['-L', SOCKET, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // no tmux server was started
  }
  await server?.stop();
  await fake?.close();
});

/** The chat's command line in a mode: local mode's agent has the key; the server's CLI does not. */
const modes = {
  local: { env: () => cliEnv(DATA, local.configHome, ENV), args: () => [] as string[] },
  server: {
    env: () => cliEnv(remote.dataDir, remote.configHome),
    args: () => ['--server', server?.baseUrl ?? '', '--token', SERVER_TOKEN],
  },
};

for (const mode of ['local', 'server'] as const)
  describe(`agents chat in a terminal (e2e, ${mode} mode)`, () => {
    it('/help, @file, an approval answered with y, /undo, /cost, /model, Esc that stays in the chat', async () => {
      pane = `chat-${mode}`;
      const script = terminalScript(join(ROOT, `chat-${mode}.sh`), modes[mode].env(), [
        `cd ${shellQuote(REPO)}`,
        [process.execPath, BIN, ...modes[mode].args(), 'chat', '--actor', 'local/coder', '--project', 'local/repo']
          .map(shellQuote)
          .join(' '),
      ]);
      const gate = createGate();
      try {
        tmux('new-session', '-d', '-s', pane, '-x', '150', '-y', '60', script);
        await see(/you ›\s*$/m);
        const opening = screen()
          .split('\n')
          .filter((l) => [...l].length > 80);
        assert.deepEqual(opening, [], 'the opening lines fit an 80-column terminal');

        type('/help');
        await see(/\/undo \[turn\] \[--force\] +put back the files/);
        await see(/\/cost +tokens and cost of this session so far/);
        type('/hlep');
        await see(/unknown command \/hlep; did you mean \/help\? \/help lists them/);

        let sent = fake.generations.length;
        fake.push({ text: ['It says **aubergine**.'], usage: { input: 120, output: 8 } });
        type('what does @note.txt say?');
        const asked = await generation(sent);
        assert.match(lastUser(asked), /--- note\.txt ---\\nthe secret word is aubergine/, 'the model got the file');
        await see(/It says aubergine\./);

        fake.push(
          {
            toolCalls: [
              {
                name: 'builtin__edit',
                arguments: JSON.stringify({
                  path: 'greet.txt',
                  edits: [{ oldText: 'hello world', newText: 'goodbye' }],
                }),
              },
            ],
            usage: { input: 200, output: 20 },
          },
          { text: ['Changed it.'], usage: { input: 220, output: 5 } },
        );
        type('say goodbye');
        const question = await see(/-hello world\n\+goodbye\n(?:.*\n)*?approve\? \[y\]es/);
        assert.equal(question.match(/-hello world/g)?.length, 1, 'the question is shown once');
        assert.equal(
          readFileSync(join(REPO, 'greet.txt'), 'utf8'),
          'hello world\n',
          'nothing written before the answer',
        );
        type('y');
        await see(/Changed it\./);
        await eventually(
          () => Promise.resolve(readFileSync(join(REPO, 'greet.txt'), 'utf8') === 'goodbye\n' || undefined),
          10_000,
          'the edit',
        );

        type('/undo');
        await see(/Undid turn \d+: 1 file put back/);
        assert.equal(readFileSync(join(REPO, 'greet.txt'), 'utf8'), 'hello world\n');

        type('/cost');
        await see(/\d+ turns · \d+ in \/ \d+ out tokens · 0\.\d{4} USD/);

        // /model lists the actors and switches the next turns to another one (its model is asked).
        type('/model');
        await see(/actor local\/coder\n(?:.*\n)*? {2}local\/coder \(current\)\n {2}local\/other/);
        type('/model other');
        await see(/next turns: local\/other/);
        fake.push({ text: ['From the other model.'] });
        sent = fake.generations.length;
        type('who answers?');
        const switched = await generation(sent);
        assert.equal((switched.body as { model?: string }).model, 'other-model', 'the turn went to the other actor');
        await see(/From the other model\./);
        type('/model coder');
        await see(/next turns: local\/coder/);

        sent = fake.generations.length;
        fake.push({ text: WORDS, gate: gate.promise, holdAfter: 1 });
        type('talk slowly');
        const slow = await generation(sent);
        await see(/talk slowly\n(?:.*\n)*?.*w0/);
        tmux('send-keys', '-t', pane, 'Escape');
        await see(/task \S+ · canceled · session \S+\n(?:.*\n)*?you ›\s*$/m);
        await slow.closed;
        assert.equal(slow.aborted, true, 'the provider request was hung up on');

        fake.push({ text: ['still here'] });
        sent = fake.generations.length;
        type('are you there? \\');
        await see(/^ {2}…\s*$/m);
        type('second line');
        assert.match(
          lastUser(await generation(sent)),
          /are you there\? \\nsecond line/,
          'a trailing \\ continued the message',
        );
        await see(/still here/);

        // A paste of several lines (tmux sends it bracketed, as the chat asked the terminal to) is one message.
        fake.push({ text: ['got the paste'] });
        sent = fake.generations.length;
        tmux('set-buffer', '-b', 'p', 'pasted one\npasted two');
        tmux('paste-buffer', '-p', '-d', '-b', 'p', '-t', pane);
        tmux('send-keys', '-t', pane, 'Enter');
        assert.match(lastUser(await generation(sent)), /pasted one\\npasted two/);
        await see(/got the paste/);

        // Tab completes a path after @ and a command after /.
        tmux('send-keys', '-t', pane, '-l', 'see @no');
        tmux('send-keys', '-t', pane, 'Tab');
        await see(/you › see @note\.txt\s*$/m);
        tmux('send-keys', '-t', pane, 'C-u');
        tmux('send-keys', '-t', pane, '-l', '/co');
        await tabUntil(/\/compact\s+\/context\s+\/cost/);
        tmux('send-keys', '-t', pane, 'C-u');
        type('/exit');
        await see(/EXIT:0/);
        assert.doesNotMatch(screen(), /w59/, 'the slow answer stopped');
      } finally {
        gate.release();
      }
    });
  });

describe('agents chat and send in a repository without --project', () => {
  const input = '/exit\n';
  it("local mode: works on the directory's project; server mode: says the directory is not used and how to name one", async () => {
    const here = await local.json(['chat', '--actor', 'local/coder'], { cwd: REPO, input, code: 0 });
    assert.equal(here.data.session.project, 'local/repo');
    assert.deepEqual((here as { messages?: unknown }).messages, [
      { level: 'info', text: 'project local/repo (this directory)' },
    ]);
    const note = `no project: against a server, ${REPO} is not used (the server's projects are its own paths); name one with --project <name> (agents project list) or agents config set defaultProject <name>`;
    const there = await remote.run(['--format', 'plain', 'chat', '--actor', 'local/coder'], {
      cwd: REPO,
      input,
      code: 0,
    });
    assert.ok(there.stderr.includes(`warn: ${note}\n`), there.stderr);
    const json = await remote.json(['chat', '--actor', 'local/coder'], { cwd: REPO, input, code: 0 });
    assert.equal(json.data.session.project, undefined, 'the server session has no project');
    // agents send starts a new session too: the same note.
    const sent = await remote.run(['--format', 'plain', 'send', '--actor', 'builtin/echo', 'hi'], {
      cwd: REPO,
      code: 0,
    });
    assert.ok(sent.stderr.includes(`warn: ${note}\n`), sent.stderr);
  });
});

/**
 * End to end: `agents chat` in a real terminal (tmux), with an LLM actor (the fake
 * OpenAI-compatible server) on a project in git. One chat, as a person has it: `/help`, a
 * message with `@file` (the model gets the file), a turn that edits a file and stops for the
 * approval, answered in place with `y`, `/undo` putting the file back, `/cost`, Esc during a
 * slow answer (the turn stops, the chat goes on and the next line works), a trailing `\`, a
 * bracketed paste, and Tab completing `@paths` and `/commands`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentsCli, BIN, cliEnv } from '../support/cli.ts';
import { createGate, startFakeOpenAI, type FakeLlm, type RecordedRequest } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually } from '../support/harness.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-chat-tty-e2e');
const KEY = 'sk-chat-tty-e2e-0123456789abcdef';
const SOCKET = `ca-chat-tty-e2e-${process.pid}`;
const ENV = { CHAT_TTY_E2E_KEY: KEY };
const REPO = join(ROOT, 'repo');
const DATA = join(ROOT, 'data');
/** A long answer, its first line whole (answers show line by line): the rest held until the gate opens. */
const WORDS = ['w0\n', ...Array.from({ length: 59 }, (_, i) => `w${i + 1} `)];

let fake: FakeLlm;
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'config'), env: ENV });
const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const screen = (): string => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'chat');
const see = (re: RegExp, ms = 20_000): Promise<string> =>
  eventually(() => Promise.resolve(re.test(screen()) ? screen() : undefined), ms, String(re)).catch((err: Error) => {
    throw new Error(`${err.message}; the screen:\n${screen()}`);
  });
const type = (line: string): void => {
  tmux('send-keys', '-t', 'chat', '-l', line);
  tmux('send-keys', '-t', 'chat', 'Enter');
};
const quote = (v: string): string => `'${v.replace(/'/g, `'\\''`)}'`;
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
  const actor = join(ROOT, 'coder.yaml');
  writeFileSync(
    actor,
    `name: local/coder\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: CHAT_TTY_E2E_KEY\nprices: { inputPerMillion: 3, outputPerMillion: 15 }\n`,
  );
  for (const args of [
    ['actor', 'add', '--config', actor],
    ['resource', 'add', 'git-checkout', 'local/repo', '--path', REPO],
    ['project', 'create', 'local/repo', '--resource', 'local/repo'],
  ])
    await cli.run(args, { code: 0 });
});

after(async () => {
  try {
    execFileSync('tmux', ['-L', SOCKET, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // no tmux server was started
  }
  await fake?.close();
});

describe('agents chat in a terminal (e2e)', () => {
  it('/help, @file, an approval answered with y, /undo, /cost, Esc that stays in the chat', async () => {
    const exports = Object.entries(cliEnv(DATA, cli.configHome, ENV))
      .filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !['TERM', 'TMUX'].includes(k))
      .map(([k, v]) => `export ${k}=${quote(v ?? '')}`);
    const script = join(ROOT, 'chat.sh');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        ...exports,
        `cd ${quote(REPO)}`,
        `${quote(process.execPath)} ${quote(BIN)} chat --actor local/coder --project local/repo`,
        'echo "EXIT:$?"',
        'exec sleep 600',
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    const gate = createGate();
    try {
      tmux('new-session', '-d', '-s', 'chat', '-x', '150', '-y', '60', script);
      await see(/you ›\s*$/m);

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
              arguments: JSON.stringify({ path: 'greet.txt', edits: [{ oldText: 'hello world', newText: 'goodbye' }] }),
            },
          ],
          usage: { input: 200, output: 20 },
        },
        { text: ['Changed it.'], usage: { input: 220, output: 5 } },
      );
      type('say goodbye');
      const question = await see(/-hello world\n\+goodbye\n(?:.*\n)*?approve\? \[y\]es/);
      assert.equal(question.match(/-hello world/g)?.length, 1, 'the question is shown once');
      assert.equal(readFileSync(join(REPO, 'greet.txt'), 'utf8'), 'hello world\n', 'nothing written before the answer');
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

      sent = fake.generations.length;
      fake.push({ text: WORDS, gate: gate.promise, holdAfter: 1 });
      type('talk slowly');
      const slow = await generation(sent);
      await see(/talk slowly\n(?:.*\n)*?.*w0/);
      tmux('send-keys', '-t', 'chat', 'Escape');
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
      tmux('paste-buffer', '-p', '-d', '-b', 'p', '-t', 'chat');
      tmux('send-keys', '-t', 'chat', 'Enter');
      assert.match(lastUser(await generation(sent)), /pasted one\\npasted two/);
      await see(/got the paste/);

      // Tab completes a path after @ and a command after /.
      tmux('send-keys', '-t', 'chat', '-l', 'see @no');
      tmux('send-keys', '-t', 'chat', 'Tab');
      await see(/you › see @note\.txt\s*$/m);
      tmux('send-keys', '-t', 'chat', 'C-u');
      tmux('send-keys', '-t', 'chat', '-l', '/co');
      tmux('send-keys', '-t', 'chat', 'Tab');
      tmux('send-keys', '-t', 'chat', 'Tab');
      await see(/\/compact\s+\/cost/);
      tmux('send-keys', '-t', 'chat', 'C-u');
      type('/exit');
      await see(/EXIT:0/);
      assert.doesNotMatch(screen(), /w59/, 'the slow answer stopped');
    } finally {
      gate.release();
    }
  });
});

/**
 * The TUI's screens against a real local agent (spawned `agents serve --stdio`) and the fake
 * OpenAI server: what the chat pane, the approval prompt, the plan view and the help show, and
 * what the keys send.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { render } from 'ink-testing-library';
import {
  actorRegistry,
  getTask,
  projectRegistry,
  resourceRegistry,
  type A2AClient,
} from '../../src/protocol/client/index.ts';
import { App } from '../../src/presentation/tui/App.tsx';
import { createTui } from '../../src/presentation/tui/index.tsx';
import { ColorContext } from '../../src/presentation/tui/theme.tsx';
import { createGate, startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually, startHarness, tempDir, type Harness } from '../support/harness.ts';

const KEY = 'sk-tui-unit-0123456789';
const ROOT = tempDir('ca-tui-unit-');
let fake: FakeLlm;
let h: Harness;
let client: A2AClient;
let repo: string;

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  repo = join(ROOT, 'repo');
  initRepo(repo, { 'notes.txt': 'the answer is 42\n', 'greeting.txt': 'hello world\n' });
  h = await startHarness('stdio', { env: { TUI_KEY: KEY } });
  client = h.client;
  await client.call(actorRegistry.add, {
    definition: {
      name: 'local/writer',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'TUI_KEY',
      tools: ['builtin/read-file', 'builtin/write-file'],
    },
  });
  await client.call(resourceRegistry.add, {
    definition: { name: 'local/tui', type: 'git-checkout', path: repo, branch: 'main' },
  });
  await client.call(projectRegistry.add, { definition: { name: 'local/tui', resources: ['local/tui'] } });
});

after(async () => {
  await h?.close();
  await fake?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

interface Mounted {
  tui: ReturnType<typeof createTui>;
  frame: () => string;
  type: (s: string) => void;
  see: (re: RegExp, what?: string) => Promise<string>;
  /** Types a line, waits until the input line shows it, then presses Enter. */
  enter: (line: string) => Promise<void>;
  done: () => void;
}

function mount(cwd?: string): Mounted {
  const tui = createTui(client, { kind: 'local' }, cwd);
  const app = render(
    <ColorContext.Provider value={false}>
      <App tui={tui} where="local agent" />
    </ColorContext.Provider>,
  );
  const frame = (): string => app.lastFrame() ?? '';
  const see = (re: RegExp, what = String(re)): Promise<string> =>
    eventually(() => Promise.resolve(re.test(frame()) ? frame() : undefined), 30_000, what).catch((err: Error) => {
      throw new Error(`${err.message}; the screen:\n${frame()}`);
    });
  return {
    tui,
    frame,
    type: (s) => app.stdin.write(s),
    see,
    enter: async (line) => {
      app.stdin.write(line);
      const tail = line.slice(-20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      await see(new RegExp(`${tail}█`), `the typed line ${line}`);
      app.stdin.write('\r');
    },
    done: () => {
      tui.plans.close();
      app.unmount();
    },
  };
}

describe('tui chat pane', () => {
  it('streams the answer as it arrives and shows tool calls as they happen', async () => {
    const ui = mount();
    try {
      await ui.see(/Sessions/);
      await ui.enter('/new --actor writer --project tui');
      await ui.see(/Chat · \S+ · local\/writer/);
      const gate = createGate();
      fake.push(
        {
          toolCalls: [{ name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }],
          usage: { input: 20, output: 5 },
        },
        { text: ['It says ', '42.'], gate: gate.promise, holdAfter: 1, usage: { input: 30, output: 4 } },
      );
      await ui.enter('what is in notes.txt?');
      const partial = await ui.see(/agent › It says\s*$/m, 'the first chunk');
      assert.match(partial, /you › what is in notes\.txt\?/);
      assert.match(partial, /✓ builtin\/read-file done \(\d+ ms\): read notes\.txt/);
      assert.doesNotMatch(partial, /42\./, 'the rest is still held by the provider');
      gate.release();
      await ui.see(/agent › It says 42\.\n {2}50 in \/ 9 out tokens · 1 tool call/);
    } finally {
      ui.done();
    }
  });

  it('takes a line and its Enter in one chunk (typed fast over SSH, or pasted) as that line sent', async () => {
    const ui = mount();
    try {
      await ui.see(/Sessions/);
      ui.type('/new --actor writer --project tui\r');
      await ui.see(/Chat · \S+ · local\/writer/);
      fake.push({ text: ['pasted, ', 'read.'], usage: { input: 8, output: 3 } });
      ui.type('first half\nsecond half\r');
      const seen = await ui.see(/agent › pasted, read\./);
      assert.match(seen, /you › first half second half/);
      const sent = fake.generations.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
      assert.deepEqual(sent.messages.at(-1), { role: 'user', content: 'first half second half' });
    } finally {
      ui.done();
    }
  });

  it('asks for an approval in place: y runs the tool, g sends guidance and the tool does not run', async () => {
    const ui = mount();
    try {
      await ui.see(/Sessions/);
      await ui.enter('/new --actor writer --project tui');
      await ui.see(/Chat/);
      fake.push({ toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"yes.txt","content":"yes\\n"}' }] });
      await ui.enter('write yes.txt');
      const asked = await ui.see(/Approval needed/);
      assert.match(asked, /Allow builtin\/write-file path=yes\.txt\?/);
      assert.match(asked, /\[y\] approve · \[n\] reject · \[g\] reject with guidance/);
      assert.equal(existsSync(join(repo, 'yes.txt')), false);
      fake.push({ text: ['Written.'] });
      ui.type('y');
      await ui.see(/agent › Written\./);
      assert.equal(readFileSync(join(repo, 'yes.txt'), 'utf8'), 'yes\n');
      assert.doesNotMatch(ui.frame(), /Approval needed/);

      fake.push({ toolCalls: [{ name: 'builtin__write-file', arguments: '{"path":"no.txt","content":"no"}' }] });
      await ui.enter('write no.txt');
      await ui.see(/Allow builtin\/write-file path=no\.txt\?/);
      fake.push({ text: ['Fine, a note then.'] });
      ui.type('g');
      await ui.see(/guidance \(what to do instead\) ›/);
      await ui.enter('write a note instead');
      const after = await ui.see(/agent › Fine, a note then\./);
      assert.match(after, /✗ builtin\/write-file declined/);
      assert.equal(existsSync(join(repo, 'no.txt')), false);
      const sent = JSON.stringify(fake.generations.at(-1)?.body);
      assert.match(sent, /write a note instead/, 'the guidance reached the model with the declined call');
    } finally {
      ui.done();
    }
  });

  it('Esc during a streamed turn cancels its task, and the app stays', async () => {
    const ui = mount();
    const gate = createGate();
    try {
      await ui.see(/Sessions/);
      await ui.enter('/new --actor writer');
      await ui.see(/Chat/);
      fake.push({
        text: Array.from({ length: 40 }, (_, i) => `w${i} `),
        gate: gate.promise,
        holdAfter: 1,
        delayMs: 10,
      });
      await ui.enter('talk');
      await ui.see(/agent › w0/);
      ui.type('\u001b');
      const canceled = await ui.see(/^\s+canceled/m, 'the canceled turn');
      gate.release();
      assert.doesNotMatch(canceled, /w39/);
      assert.match(ui.frame(), /› █/, 'the input line is back');
    } finally {
      gate.release();
      ui.done();
    }
  });
});

describe('tui chat commands', () => {
  it('/cost, /model and /help answer in the chat; nothing of them reaches the model', async () => {
    await client.call(actorRegistry.add, {
      definition: {
        name: 'local/other',
        provider: 'openai-compatible',
        model: 'fake-model',
        baseUrl: fake.url,
        apiKeyEnv: 'TUI_KEY',
      },
    });
    const ui = mount();
    try {
      await ui.see(/Sessions/);
      await ui.enter('/new --actor writer --project tui');
      await ui.see(/Chat · \S+ · local\/writer/);
      fake.push({ text: ['Hi.'], usage: { input: 12, output: 3 } });
      await ui.enter('hello');
      await ui.see(/agent › Hi\./);
      const asked = fake.generations.length;
      await ui.enter('/cost');
      await ui.see(/› \/cost\n {2}1 turn · 12 in \/ 3 out tokens/);
      await ui.enter('/model');
      await ui.see(/› \/model\n {2}actor local\/writer[\s\S]* {4}local\/other\n {4}local\/writer \(current\)/);
      await ui.enter('/model other');
      await ui.see(/next turns: local\/other/);
      await ui.see(/Chat · \S+ · local\/other/, 'the header names the new actor');
      await ui.enter('/help');
      const help = await ui.see(/Keys \(chat\)/);
      assert.match(help, /\/cost +tokens and cost of the chat so far/);
      ui.type('\u001b');
      await ui.see(/^Enter send · /m, "the chat's footer again");
      assert.equal(fake.generations.length, asked, 'no command was sent to the model');
    } finally {
      ui.done();
    }
  });

  it('@path adds the file from the directory the TUI runs in; an unreadable one sends nothing', async () => {
    const ui = mount(repo);
    try {
      await ui.see(/Sessions/);
      await ui.enter('/new --actor writer');
      await ui.see(/Chat · \S+ · local\/writer/);
      const asked = fake.generations.length;
      await ui.enter('what is in @missing.txt');
      await ui.see(/error: .*missing\.txt/);
      assert.equal(fake.generations.length, asked, 'nothing sent');
      await ui.see(/› what is in @missing\.txt█/, 'the line is back to fix');
      ui.type('\u0015');
      for (let i = 0; i < 'what is in @missing.txt'.length; i++) ui.type('\u007f');
      fake.push({ text: ['It says 42.'] });
      await ui.enter('what is in @notes.txt');
      await ui.see(/agent › It says 42\./);
      assert.match(JSON.stringify(fake.generations.at(-1)?.body), /the answer is 42/);
    } finally {
      ui.done();
    }
  });
});

describe('tui cancel and leave', () => {
  it('Ctrl-C during a streamed turn cancels its task on the agent: the model is hung up on, the words so far kept', async () => {
    const ui = mount();
    const gate = createGate();
    try {
      await ui.see(/Sessions/);
      await ui.enter('/new --actor writer');
      await ui.see(/Chat/);
      fake.push({ text: Array.from({ length: 40 }, (_, i) => `c${i} `), gate: gate.promise, holdAfter: 1 });
      const sent = fake.generations.length;
      await ui.enter('talk on');
      await ui.see(/agent › c0/);
      ui.type('\u0003');
      await ui.see(/^\s+canceled/m, 'the canceled turn');
      const req = fake.generations[sent];
      assert.ok(req, 'the model was asked');
      await req.closed;
      assert.equal(req.aborted, true, 'the provider request was aborted, not finished');
      const turn = ui.tui.store.get().turns.at(-1);
      const stored = await client.call(getTask, { id: turn?.task?.id ?? '' });
      assert.equal(stored.status.state, 'TASK_STATE_CANCELED');
      assert.match(JSON.stringify(stored.artifacts), /c0 /, 'the words streamed so far are kept');
      assert.match(ui.frame(), /› █/, 'the input line is back');
    } finally {
      gate.release();
      ui.done();
    }
  });

  it('Ctrl-C with nothing running: a hint first, a second Ctrl-C leaves; another key in between disarms it', async () => {
    const ui = mount();
    let left = false;
    void ui.tui.guard.done.then(() => (left = true));
    try {
      await ui.see(/Sessions/);
      ui.type('\u0003');
      await ui.see(/Ctrl-C again leaves/);
      ui.tui.store.dispatch({ type: 'notice', notice: undefined });
      ui.type('r');
      ui.type('\u0003');
      // The hint again: this Ctrl-C was taken as a first one.
      await ui.see(/Ctrl-C again leaves/);
      await Promise.resolve();
      assert.equal(left, false, 'a key between the two Ctrl-C disarms the first');
      ui.type('\u0003');
      assert.deepEqual(await ui.tui.guard.done, { reason: 'OK' });
    } finally {
      ui.done();
    }
  });
});

describe('tui plan view and help', () => {
  it('makes a plan, executes it, and shows its tree, log, checkpoints and diff', async () => {
    const ui = mount();
    try {
      await ui.see(/Sessions/);
      await ui.enter('/plan use builtin/replace tui --arg pattern=world --arg replacement=there --arg glob=*.txt');
      const made = await ui.see(/strategize\/complete/);
      assert.match(made, /Decisions/);
      assert.match(made, /› +strategy: /);
      assert.match(made, /step: builtin\/\S+ .*pattern=world/);
      ui.type('e');
      const ran = await ui.see(/execute\/complete/);
      assert.match(ran, /Execution log\n\s+✓ builtin\/\S+: .*\[greeting\.txt\]/);
      assert.match(ran, /Checkpoints\n\s+\S+ {2}\S/);
      ui.type('d');
      const diff = await ui.see(/^\+hello there$/m);
      assert.match(diff, /^-hello world$/m);
      assert.match(diff, /diff of \S+ · lines 1-\d+ of \d+/);
      ui.type('?');
      const help = await ui.see(/Keys \(plan\)/);
      assert.match(help, /e +execute/);
      assert.match(help, /b +roll back one step/);
      ui.type('\u001b[6~');
      await ui.see(/\/rollback \[checkpoint\] +restore the sandbox/, 'the commands, scrolled to');
      ui.type('\u001b');
      await ui.see(/diff of/);
      ui.type('d');
      await ui.see(/Execution log/);
      ui.type('b');
      await ui.see(/rolled back to checkpoint before-execute; e resumes at step 1\/1/);
      ui.type('e');
      await ui.see(/executing plan \S+ in its sandbox/);
      await ui.see(/execute\/complete/);
      ui.type('\u001b[B');
      ui.type('c');
      await ui.see(/correct the selected decision ›/);
      await ui.enter('keep the greeting short');
      await ui.see(/corrected decision \S+ \(revert, attempt \d\)/);
      await ui.enter('/execute');
      await ui.see(/execute\/complete/);
      ui.type('a');
      const asked = await ui.see(/Approval needed: apply \(1 file\) +\[y\] approve · \[n\] reject/);
      assert.match(asked, /apply\/queued|apply\/processing|execute\/complete|apply\//);
      ui.type('y');
      await ui.see(/apply\/applied/);
      assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello there\n');
    } finally {
      ui.done();
    }
  });

  it('opens a session from the list with its last turns, and deletes one only after y', async () => {
    const ui = mount();
    try {
      await ui.enter('/new --actor writer --title keepme');
      await ui.see(/Chat/);
      fake.push({ text: ['Kept answer.'] });
      await ui.enter('remember this');
      await ui.see(/agent › Kept answer\./);
      await ui.enter('/sessions');
      const list = await ui.see(/› \S+ +local\/writer +1 turns .*keepme/);
      const id = /› (\S+)/.exec(list)?.[1] ?? '';
      ui.type('\r');
      const opened = await ui.see(/you › remember this\nagent › Kept answer\./);
      assert.match(opened, new RegExp(`Chat · keepme · local/writer`));
      await ui.enter('/sessions');
      await ui.see(/› \S+ +local\/writer +1 turns .*keepme/);
      ui.type('d');
      await ui.see(new RegExp(`delete session ${id}\\? y deletes it, n keeps it`));
      ui.type('n');
      await ui.see(/kept the session/);
      assert.match(ui.frame(), new RegExp(`^› ${id} `, 'm'));
      ui.type('d');
      await ui.see(/y deletes it/);
      ui.type('y');
      await ui.see(new RegExp(`deleted session ${id}`));
      // The list is read again after the delete has been said.
      const listed = new RegExp(`^[› ] ${id} `, 'm');
      await eventually(() => Promise.resolve(listed.test(ui.frame()) ? undefined : true), 30_000, 'gone from the list');
    } finally {
      ui.done();
    }
  });

  it('opens and closes the help with F1 (a key ink reports as empty), also over a half-typed chat line', async () => {
    const ui = mount();
    try {
      await ui.see(/Sessions/);
      ui.type('\u001bOP');
      await ui.see(/Keys \(sessions\)/);
      ui.type('\u001bOP');
      const closed = await ui.see(/^↑\/↓ select · Enter open/m, "the sessions' footer again");
      assert.doesNotMatch(closed, /Keys \(sessions\)/);
      await ui.enter('/new --actor writer');
      await ui.see(/Chat/);
      ui.type('half a line');
      await ui.see(/half a line█/);
      ui.type('\u001b[11~');
      await ui.see(/Keys \(chat\)/);
      ui.type('\u001bOP');
      const back = await ui.see(/^Enter send · /m, "the chat's footer again");
      assert.doesNotMatch(back, /Keys \(chat\)/);
      assert.match(back, /› half a line█/, 'the line is kept');
    } finally {
      ui.done();
    }
  });

  it('shows a refused command with its hint in the status line', async () => {
    const ui = mount();
    try {
      await ui.see(/Sessions/);
      await ui.enter('/plan 01ARZ3NDEKTSV4RRFFQ69G5FAV');
      const shown = await ui.see(/error: .*not found/i);
      assert.doesNotMatch(shown, /at .*\.js:\d+/, 'no stack trace');
      await ui.enter('/frob');
      await ui.see(
        /error: unknown command \/frob \(UsageError\) · hint: type \/help for the commands|error: unknown command \/frob · hint: type \/help/,
      );
    } finally {
      ui.done();
    }
  });
});

/**
 * End to end: `agents tui` in a real pseudo-terminal (tmux, its own socket), read off the screen
 * as a user sees it — a chat with an LLM actor (the fake OpenAI server) whose write tool asks for
 * approval (approved once, rejected with guidance once), a plan on a real git repository executed
 * and its diff opened, a resize, and a clean exit that gives the terminal back. Local mode, then
 * the chat against `agents serve`.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, cliEnv, collect } from '../support/cli.ts';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually, startHttpServer, type HttpServerProcess } from '../support/harness.ts';
import { shellQuote, terminalScript, tmuxOn } from '../support/terminal.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-tui-e2e-'));
const KEY = 'sk-tui-e2e-0123456789abcdef';
const TOKEN = 'tui-e2e-token-0123456789abcdefgh';
const SOCKET = `ca-tui-e2e-${process.pid}`;

let fake: FakeLlm;
let repo: string;

const tmux = tmuxOn(SOCKET, { joined: false });
const { screen, see } = tmux;

/** Types a line into the TUI, waits until its input line shows it, and presses Enter. */
async function enter(pane: string, line: string): Promise<void> {
  tmux('send-keys', '-t', pane, '-l', line);
  const tail = line.slice(-20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await see(pane, new RegExp(`${tail}█`));
  tmux('send-keys', '-t', pane, 'Enter');
}

/**
 * Starts `agents tui ARGS` in a new tmux session of 120×40 through a script that prints a line
 * before it and its exit status after it (then waits), so the screen after the exit shows both.
 * CI is set as a CI job sets it: on a terminal the TUI still draws (ink would otherwise wait for
 * the exit to write one frame).
 */
function startTui(name: string, dataDir: string, args: string[]): void {
  const env = cliEnv(dataDir, join(ROOT, 'no-config'), { TUI_E2E_KEY: KEY, CI: 'true' });
  const script = terminalScript(join(ROOT, `${name}.sh`), env, [
    "printf 'BEFORE-TUI\n'",
    `${shellQuote(process.execPath)} ${shellQuote(BIN)} tui ${args.map(shellQuote).join(' ')}`,
  ]);
  tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '40', script);
}

/** Runs a CLI command to set things up (local mode, or the server when given). */
async function agents(dataDir: string, args: string[], server?: HttpServerProcess): Promise<void> {
  const full = server ? ['--server', server.baseUrl, '--token', TOKEN, ...args] : args;
  const child = spawn(process.execPath, [BIN, ...full], {
    env: cliEnv(dataDir, join(ROOT, 'no-config'), { TUI_E2E_KEY: KEY }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const res = await collect(child, { timeoutMs: 30_000 });
  assert.equal(res.code, 0, `agents ${args.join(' ')}: ${res.stdout}${res.stderr}`);
}

function actorFile(): string {
  const f = join(ROOT, 'writer.yaml');
  writeFileSync(
    f,
    `name: local/writer\nprovider: openai-compatible\nmodel: fake-model\nbaseUrl: ${fake.url}\napiKeyEnv: TUI_E2E_KEY\ntools: [builtin/read-file, builtin/write-file]\n`,
  );
  return f;
}

/** The chat part both modes run: a streamed answer, an approval approved, one rejected with guidance. */
async function chat(pane: string): Promise<void> {
  await see(pane, /CleverAgents · Sessions/);
  await enter(pane, '/new --actor writer --project tui');
  await see(pane, /CleverAgents · Chat · \S+ · local\/writer/);
  fake.push({ text: ['Hello ', 'from the ', 'fake model.'], delayMs: 20, usage: { input: 12, output: 6 } });
  await enter(pane, 'hello');
  const answered = await see(pane, /agent › Hello from the fake model\.\n {2}12 in \/ 6 out tokens/);
  assert.match(answered, /you › hello/);

  const yes = `yes-${pane}.txt`;
  fake.push({
    toolCalls: [{ name: 'builtin__write-file', arguments: JSON.stringify({ path: yes, content: 'yes\n' }) }],
  });
  await enter(pane, `write ${yes}`);
  await see(pane, new RegExp(`Allow builtin/write-file path=${yes.replace('.', '\\.')}\\?`));
  await see(pane, /\[y\] approve · \[n\] reject · \[g\] reject with guidance/);
  fake.push({ text: ['Written.'] });
  tmux('send-keys', '-t', pane, 'y');
  await see(pane, /agent › Written\./);
  assert.equal(readFileSync(join(repo, yes), 'utf8'), 'yes\n');

  const no = `no-${pane}.txt`;
  fake.push({ toolCalls: [{ name: 'builtin__write-file', arguments: JSON.stringify({ path: no, content: 'no' }) }] });
  await enter(pane, `write ${no}`);
  await see(pane, new RegExp(`Allow builtin/write-file path=${no.replace('.', '\\.')}\\?`));
  fake.push({ text: ['Noted, leaving it.'] });
  tmux('send-keys', '-t', pane, 'g');
  await see(pane, /guidance \(what to do instead\) ›/);
  await enter(pane, 'leave the file alone');
  const declined = await see(pane, /agent › Noted, leaving it\./);
  assert.match(declined, /✗ builtin\/write-file declined/);
  assert.equal(existsSync(join(repo, no)), false);
  assert.match(JSON.stringify(fake.generations.at(-1)?.body), /leave the file alone/);

  // The chat's commands answer in the pane (the command declares their methods); none reaches the model.
  const asked = fake.generations.length;
  await enter(pane, '/cost');
  await see(pane, /› \/cost\n {2}3 turns · \d+ in \/ \d+ out tokens/);
  await enter(pane, '/diff');
  await see(pane, new RegExp(`› /diff\\n[\\s\\S]*${yes.replace('.', '\\.')}[\\s\\S]*^\\+yes$`, 'm'));
  await enter(pane, '/help');
  await see(pane, /Keys \(chat\)[\s\S]*\/cost +tokens and cost of the chat so far/);
  tmux('send-keys', '-t', pane, 'Escape');
  await see(pane, /^Enter send · /m);
  assert.equal(fake.generations.length, asked);
}

/** Leaves with /quit and checks the terminal is back: main screen, cursor shown, exit status 0. */
async function quit(pane: string): Promise<void> {
  tmux('send-keys', '-t', pane, '-l', '/quit');
  await see(pane, /\/quit█/);
  tmux('send-keys', '-t', pane, 'Enter');
  const after = await see(pane, /EXIT:\d+/);
  assert.match(after, /EXIT:0/);
  assert.match(after, /^BEFORE-TUI$/m, 'the main screen is back');
  assert.doesNotMatch(after, /CleverAgents ·/, 'the alternate screen was left');
  assert.equal(tmux('display-message', '-p', '-t', pane, '#{alternate_on} #{cursor_flag}').trim(), '0 1');
}

before(async () => {
  fake = await startFakeOpenAI({ expectKey: KEY });
  repo = join(ROOT, 'repo');
  initRepo(repo, { 'greeting.txt': 'hello world\n', 'notes.txt': 'the answer is 42\n' });
});

after(async () => {
  try {
    tmux('kill-server');
  } catch {
    // no tmux server was started
  }
  await fake?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

describe('agents tui in a terminal (local mode)', () => {
  const data = join(ROOT, 'local');

  before(async () => {
    await agents(data, ['actor', 'add', '--config', actorFile()]);
    await agents(data, ['resource', 'add', 'git-checkout', 'local/tui', '--path', repo, '--branch', 'main']);
    await agents(data, ['project', 'create', 'local/tui', '--resource', 'local/tui']);
  });

  it('chats, answers approvals, opens a plan diff, follows a resize and exits cleanly', async () => {
    startTui('local', data, []);
    await chat('local');

    await enter('local', '/plan use builtin/replace tui --arg pattern=world --arg replacement=there --arg glob=*.txt');
    const planned = await see('local', /strategize\/complete/);
    assert.match(planned, /step: builtin\/\S+ .*pattern=world/);
    tmux('send-keys', '-t', 'local', 'e');
    const executed = await see('local', /execute\/complete/);
    assert.match(executed, /✓ builtin\/\S+: .*\[greeting\.txt\]/);
    tmux('send-keys', '-t', 'local', 'd');
    const diff = await see('local', /^\+hello there\s*$/m);
    assert.match(diff, /^-hello world\s*$/m);
    assert.equal(
      readFileSync(join(repo, 'greeting.txt'), 'utf8'),
      'hello world\n',
      'not applied: the repo is untouched',
    );

    const wide = screen('local').replace(/\n$/, '').split('\n');
    assert.equal(wide.length, 40);
    assert.match(wide[39] ?? '', /^e execute .*…$/, 'the footer is on the last line of 40');
    assert.ok(
      wide.some((l) => [...l].length > 80),
      'lines use the 120 columns',
    );
    tmux('resize-window', '-t', 'local', '-x', '80', '-y', '24');
    const narrow = await see('local', /diff of/).then(() =>
      eventually(
        () => {
          const lines = screen('local').replace(/\n$/, '').split('\n');
          return Promise.resolve(lines.length === 24 && /^e execute .*…$/.test(lines[23] ?? '') ? lines : undefined);
        },
        20_000,
        'the footer on the last line of 24',
      ),
    );
    assert.ok(
      narrow.every((l) => [...l].length <= 80),
      'every line fits in 80 columns',
    );
    assert.match(narrow[0] ?? '', /^CleverAgents · Plan/);
    assert.match(narrow.join('\n'), /^\+hello there\s*$/m);

    // Apply, approved in place; then the plans list, and the session again with its last turns.
    tmux('send-keys', '-t', 'local', 'd');
    await see('local', /Execution log/);
    tmux('send-keys', '-t', 'local', 'a');
    await see('local', /Approval needed: apply \(1 file\)/);
    tmux('send-keys', '-t', 'local', 'y');
    await see('local', /apply\/applied/);
    assert.equal(readFileSync(join(repo, 'greeting.txt'), 'utf8'), 'hello there\n');
    tmux('send-keys', '-t', 'local', 'Escape');
    await see('local', /CleverAgents · Plans[^\n]*\n› \S+ +apply\/applied/);
    await enter('local', '/sessions');
    await see('local', /CleverAgents · Sessions[^\n]*\n› \S+ +local\/writer/);
    tmux('send-keys', '-t', 'local', 'Enter');
    await see('local', /you › hello\nagent › Hello from the fake model\./);

    await quit('local');
  });
});

describe('agents tui when it cannot work', () => {
  const data = join(ROOT, 'refusals');

  it('refuses to start without a terminal, with the usage exit code', async () => {
    const child = spawn(process.execPath, [BIN, 'tui'], {
      env: cliEnv(data, join(ROOT, 'no-config')),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end();
    const res = await collect(child, { timeoutMs: 20_000 });
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /^error: agents tui needs a terminal$/m);
    assert.match(res.stderr, /^hint: use agents chat for pipes/m);
  });

  it('reports a local agent that died, gives the terminal back and exits with the unreachable code', async () => {
    startTui('dead', data, []);
    await see('dead', /CleverAgents · Sessions/);
    const shell = tmux('display-message', '-p', '-t', 'dead', '#{pane_pid}').trim();
    const childrenOf = (pid: string): string[] =>
      execFileSync('ps', ['-o', 'pid=', '--ppid', pid], { encoding: 'utf8' })
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
    const [tuiPid] = childrenOf(shell);
    assert.ok(tuiPid, 'the tui runs under the shell');
    const [agentPid] = childrenOf(tuiPid);
    assert.ok(agentPid, 'the local agent runs under the tui');
    process.kill(Number(agentPid), 'SIGKILL');
    tmux('send-keys', '-t', 'dead', 'r');
    const after = await see('dead', /EXIT:\d+/);
    assert.match(after, /EXIT:6/);
    assert.match(
      after,
      /^error the agent process exited .*\n\s+hint: the local agent could not be started or stopped answering/m,
    );
    assert.doesNotMatch(after, /CleverAgents ·|\n\s+at /, 'the main screen, no stack trace');
    assert.equal(tmux('display-message', '-p', '-t', 'dead', '#{alternate_on} #{cursor_flag}').trim(), '0 1');
  });
});

describe('agents tui in a terminal (server mode)', () => {
  const data = join(ROOT, 'server');
  const clientData = join(ROOT, 'server-client');
  let server: HttpServerProcess;

  before(async () => {
    server = await startHttpServer({
      dataDir: data,
      token: TOKEN,
      env: cliEnv(data, join(ROOT, 'no-config'), { TUI_E2E_KEY: KEY }),
    });
    await agents(clientData, ['actor', 'add', '--config', actorFile()], server);
    await agents(
      clientData,
      ['resource', 'add', 'git-checkout', 'local/tui', '--path', repo, '--branch', 'main'],
      server,
    );
    await agents(clientData, ['project', 'create', 'local/tui', '--resource', 'local/tui'], server);
  });

  after(async () => {
    await server?.stop();
  });

  it('holds the same chat against agents serve and exits cleanly', async () => {
    startTui('server', clientData, ['--server', server.baseUrl, '--token', TOKEN]);
    const first = await see('server', /CleverAgents · Sessions · server http:\/\/127\.0\.0\.1:\d+/);
    assert.ok(first);
    await chat('server');
    await quit('server');
  });
});

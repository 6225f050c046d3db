/**
 * The local agent bin.ts spawns before the CLI loads its commands (presentation/cli/early-agent.ts):
 * spawned only when the arguments most likely need it, it serves nothing until its client writes
 * (in a data directory that exists it builds its services meanwhile), and a command that does not
 * use it leaves no data directory, no lease and no process behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { after, describe, it } from 'node:test';
import { STARTUP_MARKS_ENV } from '../../src/main/startup-marks.ts';
import { AGENT_NODE_ARGS, agentEnv } from '../../src/protocol/client/agent-env.ts';
import { spawnEarlyAgent } from '../../src/presentation/cli/early-agent.ts';
import { StdioClientTransport } from '../../src/protocol/client/stdio.transport.ts';
import { collect, type CliResult } from '../support/cli.ts';
import { BIN, eventually } from '../support/harness.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-early-e2e-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

function env(configHome: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: configHome, NO_COLOR: '1' };
  for (const k of ['CLEVERAGENTS_SERVER_URL', 'CLEVERAGENTS_SERVER_TOKEN', 'CLEVERAGENTS_DATA_DIR']) delete e[k];
  return e;
}

function cli(args: string[], e: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { env: e, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.end();
  return collect(child, { timeoutMs: 30_000 });
}

describe('the early local agent', () => {
  it('is not spawned for help, server mode, serve or login', () => {
    const configHome = join(ROOT, 'none');
    const e = env(configHome);
    for (const args of [
      [],
      ['--data-dir', 'x', 'health'],
      ['health', '--help'],
      ['task', 'list', '-h'],
      ['health', '--server', 'http://127.0.0.1:1'],
      ['health', '--server=http://127.0.0.1:1'],
      ['serve', '--stdio'],
      ['login'],
      ['logout'],
      ['help', 'task'],
    ])
      assert.equal(spawnEarlyAgent(args, e, BIN), undefined, args.join(' '));
    assert.equal(spawnEarlyAgent(['health'], { ...e, CLEVERAGENTS_SERVER_URL: 'http://127.0.0.1:1' }, BIN), undefined);
    const withServer = join(ROOT, 'with-server');
    mkdirSync(join(withServer, 'cleveragents'), { recursive: true });
    writeFileSync(join(withServer, 'cleveragents', 'config.yaml'), 'format: json\nserver: http://127.0.0.1:1\n');
    assert.equal(spawnEarlyAgent(['health'], env(withServer), BIN), undefined);
    const loggedIn = join(ROOT, 'logged-in');
    mkdirSync(join(loggedIn, 'cleveragents'), { recursive: true });
    writeFileSync(join(loggedIn, 'cleveragents', 'credentials.json'), '{"servers":{}}');
    assert.equal(spawnEarlyAgent(['health'], env(loggedIn), BIN), undefined);
  });

  it('is handed only to a connection that asks for it with the same arguments', async () => {
    const e = env(join(ROOT, 'none'));
    const dataDir = join(ROOT, 'handed');
    const early = spawnEarlyAgent(['health', '--data-dir', dataDir], e, BIN);
    assert.ok(early);
    assert.equal(early.take([], 'capture', e), undefined);
    assert.equal(early.take(['--data-dir', dataDir], 'inherit', e), undefined);
    assert.equal(early.take(['--data-dir', dataDir], 'capture', { ...e }), undefined);
    const child = early.take(['--data-dir', dataDir], 'capture', e);
    assert.ok(child);
    assert.equal(early.take(['--data-dir', dataDir], 'capture', e), undefined);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.stdin?.end();
    // A client that leaves before writing: the agent ends, having opened nothing.
    assert.equal(await exited, 0);
    assert.equal(existsSync(dataDir), false);
  });

  it(
    'builds its services before the client writes in a data directory that exists, and gives its lease back unused',
    {
      timeout: 60_000,
    },
    async () => {
      const e = env(join(ROOT, 'none'));
      const dataDir = join(ROOT, 'existing');
      assert.equal((await cli(['health', '--data-dir', dataDir], e)).code, 0);
      const marks = join(ROOT, 'existing-marks.tsv');
      const withMarks = { ...e, [STARTUP_MARKS_ENV]: marks };
      const early = spawnEarlyAgent(['health', '--data-dir', dataDir], withMarks, BIN);
      assert.ok(early);
      const child = early.take(['--data-dir', dataDir], 'capture', withMarks);
      assert.ok(child);
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const written = (): string => (existsSync(marks) ? readFileSync(marks, 'utf8') : '');
      // Nothing is written to the agent: its services are built all the same.
      await eventually(async () => (written().includes('\tagent:built\t') ? true : undefined), 50_000, 'agent:built');
      assert.doesNotMatch(written(), /\tagent:client-wrote\t/);
      child.stdin?.end();
      assert.equal(await exited, 0);
      const db = new Database(join(dataDir, 'cleveragents.db'), { readonly: true });
      try {
        assert.deepEqual(db.prepare('SELECT id FROM runners').all(), []);
      } finally {
        db.close();
      }
    },
  );

  it("starts with glibc's malloc threshold fixed, unless the environment sets its own", async (t) => {
    if (process.platform !== 'linux') return t.skip('the setting is for glibc on Linux');
    const e = env(join(ROOT, 'none'));
    const environOf = (pid: number | undefined): string[] =>
      readFileSync(`/proc/${String(pid)}/environ`, 'utf8').split('\0');
    for (const [given, want] of [
      [e, 'MALLOC_MMAP_THRESHOLD_=131072'],
      [{ ...e, MALLOC_MMAP_THRESHOLD_: '65536' }, 'MALLOC_MMAP_THRESHOLD_=65536'],
    ] as const) {
      const early = spawnEarlyAgent(['health'], given, BIN);
      assert.ok(early);
      const child = early.take([], 'capture', given);
      assert.ok(child);
      try {
        const seen = environOf(child.pid).filter((kv) => kv.startsWith('MALLOC_MMAP_THRESHOLD_='));
        assert.deepEqual(seen, [want]);
      } finally {
        const exited = new Promise((resolve) => child.on('exit', resolve));
        child.stdin?.end();
        await exited;
      }
    }
    assert.deepEqual(agentEnv({ A: '1' }, 'darwin'), { A: '1' }, 'elsewhere the environment is as given');
  });

  it('starts Node with the young generation its start needs, before its script', async (t) => {
    if (process.platform !== 'linux') return t.skip('read from /proc');
    const e = env(join(ROOT, 'none'));
    const early = spawnEarlyAgent(['health'], e, BIN);
    assert.ok(early);
    const child = early.take([], 'capture', e);
    assert.ok(child);
    try {
      const argv = readFileSync(`/proc/${String(child.pid)}/cmdline`, 'utf8').split('\0');
      assert.deepEqual(argv.slice(1, 2 + AGENT_NODE_ARGS.length), [...AGENT_NODE_ARGS, BIN]);
      assert.deepEqual(AGENT_NODE_ARGS, ['--min-semi-space-size=16']);
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.stdin?.end();
      await exited;
    }
  });

  it("leads a process group of its own (early or spawned by a client): a terminal's Ctrl-C reaches the client only", async (t) => {
    if (process.platform === 'win32') return t.skip('process groups are POSIX');
    // Signal 0 to -pid only asks whether the process group pid exists: it does when the agent leads
    // one, apart from the terminal's foreground group its client runs in.
    const leadsGroup = (pid: number | undefined): boolean => {
      try {
        process.kill(-(pid as number), 0);
        return true;
      } catch {
        return false;
      }
    };
    const e = env(join(ROOT, 'none'));
    const early = spawnEarlyAgent(['health'], e, BIN);
    const child = early?.take([], 'capture', e);
    assert.ok(child);
    try {
      assert.equal(leadsGroup(child.pid), true, 'the early agent');
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.stdin?.end();
      await exited;
    }
    const spawned = await StdioClientTransport.connect({
      bin: BIN,
      extraArgs: ['--data-dir', join(ROOT, 'group')],
      env: e,
    });
    try {
      assert.equal(leadsGroup(spawned.pid), true, "a client's agent");
    } finally {
      await spawned.close();
    }
  });

  it('leaves no data directory behind when the command fails before connecting', async () => {
    const dataDir = join(ROOT, 'unused');
    const r = await cli(['task', 'get', '--data-dir', dataDir], env(join(ROOT, 'none')));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /missing required argument 'id'/);
    assert.equal(existsSync(dataDir), false);
  });

  it('serves the command that needs it', async () => {
    const dataDir = join(ROOT, 'used');
    const r = await cli(['health', '--data-dir', dataDir, '--format', 'json'], env(join(ROOT, 'none')));
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { data: { status: string } }).data.status, 'ok');
    assert.equal(existsSync(join(dataDir, 'cleveragents.db')), true);
  });
});

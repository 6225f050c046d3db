import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { McpUnavailable, silentLogger, type Logger } from '../../../src/application/index.ts';
import type { McpServer } from '../../../src/domain/registry/skill.definition.ts';
import { SdkMcpHub } from '../../../src/infrastructure/index.ts';
import { MAX_OUTPUT_CHARS } from '../../../src/infrastructure/mcp/mcp-result.ts';
import { startHttpFixture, type HttpFixture } from '../../support/mcp-fixture-http.ts';
import { FIXTURE_AUDIO_BASE64, FIXTURE_PNG_BASE64, MANY_TOOLS } from '../../support/mcp-fixture-tools.ts';
import { alive, waitUntil } from './fixtures/processes.ts';

const FIXTURE = fileURLToPath(new URL('../../support/mcp-fixture-server.ts', import.meta.url));
const SAFETY = { timeout: 30_000 };
const never = () => new AbortController().signal;

/** A stdio definition of the fixture server. */
const stdio = (name: string, extra: Partial<Extract<McpServer, { command: string }>> = {}): McpServer => ({
  name,
  command: process.execPath,
  args: [FIXTURE],
  ...extra,
});

/** The live child processes of this test process. */
function children(): Set<number> {
  const out = new Set<number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === process.pid && fields[0] !== 'Z') out.add(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const added = (before: Set<number>): number[] => [...children()].filter((p) => !before.has(p));

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (obj: object, msg?: string) => lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  return { lines, debug: log, info: log, warn: log, error: log };
}

async function pidOf(hub: SdkMcpHub, server: McpServer): Promise<number> {
  const r = await hub.callTool(server, 'pid', {}, never());
  assert.equal(r.ok, true, r.summary);
  return Number(r.output);
}

/** Polls a tool until its output is `want` (bounded); its last output. */
async function pollOutput(hub: SdkMcpHub, server: McpServer, tool: string, want: string): Promise<string> {
  let last = '';
  for (let i = 0; i < 100 && last !== want; i++) {
    last = (await hub.callTool(server, tool, {}, never())).output;
    if (last !== want) await new Promise((r) => setTimeout(r, 50));
  }
  return last;
}

describe('SdkMcpHub over stdio (the fixture server)', SAFETY, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-hub-'));
  const fx = stdio('fx', { env: { FIXTURE_DIR: dir, FOO: 'bar' } });
  const hub = new SdkMcpHub({ logger: silentLogger });
  after(async () => {
    await hub.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists the tools with their descriptions, schemas and read-only hints', async () => {
    const tools = await hub.listTools(fx, never());
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['echo', 'add', 'write_note', 'slow', 'crash', 'fail', 'getenv', 'pid'])
      assert.ok(byName.has(name), name);
    const echo = byName.get('echo')!;
    assert.equal(echo.description, 'Answers its text.');
    assert.equal(echo.inputSchema.type, 'object');
    assert.deepEqual((echo.inputSchema.properties as any).text.type, 'string');
    assert.deepEqual(echo.inputSchema.required, ['text']);
    assert.equal(echo.readOnly, true);
    assert.equal(byName.get('add')!.readOnly, true);
    assert.equal(byName.get('write_note')!.readOnly, false);
    assert.equal(byName.get('slow')!.readOnly, false, 'no annotation: not read-only');
  });

  it('calls tools and hands on their text with a one-line summary', async () => {
    const echo = await hub.callTool(fx, 'echo', { text: 'hello' }, never());
    assert.deepEqual(echo, { ok: true, summary: 'mcp:fx/echo: 1 line', output: 'hello' });
    assert.equal((await hub.callTool(fx, 'add', { a: 2, b: 3 }, never())).output, '5');
    const big = await hub.callTool(fx, 'big', { lines: 12 }, never());
    assert.equal(big.summary, 'mcp:fx/big: 12 lines');
    const note = await hub.callTool(fx, 'write_note', { name: 'n.txt', text: 'abc' }, never());
    assert.equal(note.output, 'wrote 3 bytes to n.txt');
    assert.equal(fs.readFileSync(path.join(dir, 'n.txt'), 'utf8'), 'abc');
  });

  it('names image, audio and binary parts, gives embedded text, and structured content as JSON', async () => {
    const mixed = await hub.callTool(fx, 'mixed', {}, never());
    const png = Buffer.from(FIXTURE_PNG_BASE64, 'base64').length;
    const audio = Buffer.from(FIXTURE_AUDIO_BASE64, 'base64').length;
    assert.deepEqual(mixed.output.split('\n'), [
      'first',
      `[image image/png, ${png} bytes]`,
      `[audio audio/wav, ${audio} bytes]`,
      'embedded text',
      `[resource file:///bin/blob image/png, ${png} bytes]`,
      '[resource link file:///notes/b.txt]',
    ]);
    const structured = await hub.callTool(fx, 'structured', {}, never());
    assert.equal(structured.ok, true);
    assert.deepEqual(JSON.parse(structured.output), { count: 2, names: ['a', 'b'] });
  });

  it('cuts a huge output and says so', async () => {
    const r = await hub.callTool(fx, 'big', { lines: 3000 }, never());
    assert.equal(r.ok, true);
    assert.ok(r.output.startsWith('x'.repeat(99)));
    assert.match(
      r.output,
      new RegExp(`\\[output truncated: 299999 characters, the first ${MAX_OUTPUT_CHARS} shown\\]$`),
    );
    assert.ok(r.output.length < MAX_OUTPUT_CHARS + 200);
  });

  it('reports a tool error (isError) and an unknown tool as ok:false with the text', async () => {
    const fail = await hub.callTool(fx, 'fail', {}, never());
    assert.deepEqual(fail, {
      ok: false,
      summary: 'mcp:fx/fail failed: it failed on purpose',
      output: 'it failed on purpose',
    });
    const unknown = await hub.callTool(fx, 'no_such_tool', {}, never());
    assert.equal(unknown.ok, false);
    assert.match(unknown.summary, /^mcp:fx\/no_such_tool failed: .*no_such_tool/);
  });

  it('gives the server only the minimal environment plus its own env', async () => {
    process.env.CLEVERAGENTS_MCP_TEST_SECRET = 'agent-secret';
    try {
      assert.equal(
        (await hub.callTool(fx, 'getenv', { name: 'CLEVERAGENTS_MCP_TEST_SECRET' }, never())).output,
        '(unset)',
      );
      assert.equal((await hub.callTool(fx, 'getenv', { name: 'NODE_TEST_CONTEXT' }, never())).output, '(unset)');
      assert.equal((await hub.callTool(fx, 'getenv', { name: 'FOO' }, never())).output, 'bar');
      assert.equal((await hub.callTool(fx, 'getenv', { name: 'PATH' }, never())).output, process.env.PATH);
    } finally {
      delete process.env.CLEVERAGENTS_MCP_TEST_SECRET;
    }
  });

  it('runs the server in its cwd', async () => {
    const inDir = stdio('fx', { cwd: dir, args: [FIXTURE] });
    const pid = await pidOf(hub, inDir);
    assert.equal(fs.realpathSync(`/proc/${pid}/cwd`), fs.realpathSync(dir));
  });

  it('ends a call past callTimeoutSeconds, cancels it on the server, and goes on working', async () => {
    const quick = stdio('fx', { callTimeoutSeconds: 0.5 });
    const r = await hub.callTool(quick, 'slow', { ms: 20_000 }, never());
    assert.deepEqual(r, {
      ok: false,
      summary: 'mcp:fx/slow timed out after 0.5 s',
      output: 'mcp:fx/slow timed out after 0.5 s',
    });
    assert.equal((await hub.callTool(quick, 'echo', { text: 'still here' }, never())).output, 'still here');
    assert.equal(await pollOutput(hub, quick, 'cancelled', '1'), '1', 'the server saw notifications/cancelled');
  });

  it("ends a call at once when the caller's signal aborts (the server is told)", async () => {
    const own = stdio('fx', { env: { ROLE: 'abort' } });
    await pidOf(hub, own);
    const ac = new AbortController();
    const call = hub.callTool(own, 'slow', { ms: 120_000 }, ac.signal);
    setTimeout(() => ac.abort(), 100);
    assert.deepEqual(await call, { ok: false, summary: 'mcp:fx/slow cancelled', output: 'mcp:fx/slow cancelled' });
    assert.equal(await pollOutput(hub, own, 'cancelled', '1'), '1');
    const pre = new AbortController();
    pre.abort();
    assert.equal((await hub.callTool(own, 'echo', { text: 'x' }, pre.signal)).summary, 'mcp:fx/echo cancelled');
  });

  it('reports a crash to the calls in flight with the stderr tail, and starts the server again on next use', async () => {
    const crashy = stdio('fx', { env: { ROLE: 'crash' } });
    const first = await pidOf(hub, crashy);
    const inFlight = hub.callTool(crashy, 'slow', { ms: 60_000 }, never());
    assert.equal(await pollOutput(hub, crashy, 'running', '1'), '1', 'the slow call reached the server');
    const crash = await hub.callTool(crashy, 'crash', {}, never());
    assert.equal(crash.ok, false);
    assert.equal(crash.summary, 'mcp:fx/crash failed: mcp server fx exited with code 1: boom (restarted on next use)');
    assert.match(crash.output, /exited with code 1: boom/);
    const slow = await inFlight;
    assert.equal(slow.ok, false);
    assert.match(slow.summary, /^mcp:fx\/slow failed: mcp server fx exited with code 1: boom/);
    assert.equal(await waitUntil(() => !alive(first), 5000), true);
    const second = await pidOf(hub, crashy);
    assert.notEqual(second, first);
    assert.equal(alive(second), true);
  });

  it('keeps only the last 4 KB of stderr, and never shows a secret env value', async () => {
    const secret = 'tok-very-secret-value';
    const logging = stdio('fx', { env: { ROLE: 'stderr', API_TOKEN: secret } });
    assert.equal((await hub.callTool(logging, 'log', { text: 'y'.repeat(10_000) }, never())).ok, true);
    assert.equal((await hub.callTool(logging, 'log', { text: `the token is ${secret}` }, never())).ok, true);
    const crash = await hub.callTool(logging, 'crash', {}, never());
    assert.equal(crash.ok, false);
    assert.match(crash.output, /exited with code 1: y+\nthe token is \[redacted\]\nboom\n/);
    assert.ok(!crash.output.includes(secret) && !crash.summary.includes(secret));
    const tail = crash.output.slice(crash.output.indexOf(': y') + 2, crash.output.indexOf('\n(mcp server'));
    assert.ok(tail.length <= 4096 && tail.length > 4000, String(tail.length));
  });

  it('pages through a long tool list', async () => {
    const tools = await hub.listTools(stdio('many', { env: { FIXTURE_MODE: 'many' } }), never());
    assert.equal(tools.length, MANY_TOOLS);
    assert.deepEqual(
      tools.map((t) => t.name),
      Array.from({ length: MANY_TOOLS }, (_, i) => `tool_${String(i).padStart(3, '0')}`),
    );
  });

  it('lists again after the server says its tools changed', async () => {
    const changing = stdio('fx', { env: { ROLE: 'changing' } });
    assert.ok(!(await hub.listTools(changing, never())).some((t) => t.name === 'late_tool'));
    assert.equal((await hub.callTool(changing, 'add_tool', { name: 'late_tool' }, never())).ok, true);
    let names: string[] = [];
    for (let i = 0; i < 100 && !names.includes('late_tool'); i++) {
      names = (await hub.listTools(changing, never())).map((t) => t.name);
      if (!names.includes('late_tool')) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(names.includes('late_tool'));
  });
});

describe('SdkMcpHub: one connection per definition', SAFETY, () => {
  it('shares one child between concurrent first uses and between equal definitions', async () => {
    const hub = new SdkMcpHub({ logger: silentLogger });
    after(() => hub.close());
    const before = children();
    const a: McpServer = { name: 'same', command: process.execPath, args: [FIXTURE], env: { A: '1', B: '2' } };
    const b: McpServer = { env: { B: '2', A: '1' }, args: [FIXTURE], command: process.execPath, name: 'same' };
    const [list1, list2, p1, p2, p3] = await Promise.all([
      hub.listTools(a, never()),
      hub.listTools(b, never()),
      hub.callTool(a, 'pid', {}, never()),
      hub.callTool(b, 'pid', {}, never()),
      hub.callTool(a, 'pid', {}, never()),
    ]);
    assert.equal(list1.length, list2.length);
    assert.equal(new Set([p1.output, p2.output, p3.output]).size, 1);
    assert.deepEqual(added(before), [Number(p1.output)]);
    const other = await pidOf(hub, { ...a, name: 'other' });
    assert.notEqual(other, Number(p1.output));
  });
});

describe('SdkMcpHub: servers that cannot be used', SAFETY, () => {
  const hub = new SdkMcpHub({ logger: silentLogger });
  after(() => hub.close());

  it('gives up on a server that never answers within the connect timeout, and leaves no child', async () => {
    const before = children();
    const hang = stdio('hang', { env: { FIXTURE_MODE: 'hang' }, connectTimeoutSeconds: 1 });
    await assert.rejects(hub.listTools(hang, never()), (err: unknown) => {
      assert.ok(err instanceof McpUnavailable);
      assert.equal(err.server, 'hang');
      assert.match(err.message, /^mcp server hang did not get ready within 1 s/);
      assert.match(err.hint, /connectTimeoutSeconds/);
      return true;
    });
    assert.deepEqual(added(before), []);
    const call = await hub.callTool(hang, 'echo', { text: 'x' }, never());
    assert.equal(call.ok, false);
    assert.match(call.summary, /^mcp:hang\/echo failed: mcp server hang did not get ready within 1 s/);
    assert.deepEqual(added(before), []);
  });

  it('says a server exited at start with its stderr, and tries again on the next use', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const gate = path.join(dir, 'ready');
    const gated = stdio('gated', { env: { FIXTURE_READY_FILE: gate } });
    await assert.rejects(hub.listTools(gated, never()), (err: unknown) => {
      assert.ok(err instanceof McpUnavailable);
      assert.match(err.message, /^mcp server gated exited with code 3 before it was ready: fixture: refusing to start/);
      assert.match(err.hint, /by hand/);
      return true;
    });
    fs.writeFileSync(gate, '');
    assert.ok((await hub.listTools(gated, never())).some((t) => t.name === 'echo'));
  });

  it('says a command does not exist, or its cwd does not', async () => {
    await assert.rejects(
      hub.listTools({ name: 'nope', command: 'definitely-not-a-command-xyz' }, never()),
      (err: unknown) => {
        assert.ok(err instanceof McpUnavailable);
        assert.equal(
          err.message,
          'mcp server nope could not be started: command "definitely-not-a-command-xyz" was not found',
        );
        assert.match(err.hint, /PATH/);
        return true;
      },
    );
    const r = await hub.callTool({ name: 'nope', command: 'definitely-not-a-command-xyz' }, 'x', {}, never());
    assert.equal(r.ok, false);
    assert.match(r.summary, /was not found/);
    await assert.rejects(
      hub.listTools(stdio('nocwd', { cwd: '/definitely/not/here' }), never()),
      /mcp server nocwd cannot start: its working directory \/definitely\/not\/here does not exist/,
    );
  });
});

describe('SdkMcpHub.close', SAFETY, () => {
  it('stops every child (SIGKILL for one ignoring SIGTERM), is idempotent, and refuses later uses', async () => {
    const logger = recordingLogger();
    const hub = new SdkMcpHub({ logger });
    const polite = await pidOf(hub, stdio('polite'));
    const stubborn = await pidOf(hub, stdio('stubborn', { env: { FIXTURE_MODE: 'stubborn' } }));
    assert.equal(alive(polite) && alive(stubborn), true);
    await hub.close();
    assert.equal(alive(polite), false);
    assert.equal(alive(stubborn), false);
    assert.ok(logger.lines.some((l) => l.includes('ignored SIGTERM')));
    await hub.close();
    const r = await hub.callTool(stdio('polite'), 'echo', { text: 'x' }, never());
    assert.equal(r.ok, false);
    assert.match(r.summary, /closed/);
    await assert.rejects(hub.listTools(stdio('polite'), never()), McpUnavailable);
  });

  it('stops a server still starting', async () => {
    const hub = new SdkMcpHub({ logger: silentLogger });
    const before = children();
    const listing = hub.listTools(stdio('hang', { env: { FIXTURE_MODE: 'hang' } }), never());
    await waitUntil(() => added(before).length === 1, 5000);
    await hub.close();
    await assert.rejects(listing, /mcp server hang: the MCP hub was closed/);
    assert.deepEqual(added(before), []);
  });
});

describe('SdkMcpHub with the published @modelcontextprotocol/server-filesystem', SAFETY, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-files-'));
  const hub = new SdkMcpHub({ logger: silentLogger });
  after(async () => {
    await hub.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists its tools and reads a file from the allowed directory', async () => {
    const require = createRequire(import.meta.url);
    const entry = path.join(
      path.dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
      'dist/index.js',
    );
    fs.writeFileSync(path.join(dir, 'hello.txt'), 'line one\nline two\n');
    const files: McpServer = { name: 'files', command: process.execPath, args: [entry, dir] };
    const tools = await hub.listTools(files, never());
    const read = tools.find((t) => t.name === 'read_text_file');
    assert.ok(read);
    assert.equal(read.readOnly, true);
    assert.equal(tools.find((t) => t.name === 'write_file')?.readOnly, false);
    const r = await hub.callTool(files, 'read_text_file', { path: path.join(dir, 'hello.txt') }, never());
    assert.equal(r.ok, true, r.summary);
    assert.match(r.output, /line one\nline two/);
    const outside = await hub.callTool(files, 'read_text_file', { path: '/etc/hostname' }, never());
    assert.equal(outside.ok, false);
  });
});

describe('SdkMcpHub over streamable HTTP (the fixture server)', SAFETY, () => {
  const TOKEN = 'Bearer tok-abcdef-123456';
  let web: HttpFixture;
  let def: McpServer;
  const hub = new SdkMcpHub({ logger: silentLogger });
  before(async () => {
    web = await startHttpFixture({ requireAuthorization: TOKEN });
    def = { name: 'web', url: web.url, headers: { Authorization: TOKEN } };
  });
  after(async () => {
    await hub.close();
    await web.close();
  });

  it('lists and calls the tools, sending the definition headers', async () => {
    const tools = await hub.listTools(def, never());
    assert.equal(tools.find((t) => t.name === 'echo')?.readOnly, true);
    assert.deepEqual(await hub.callTool(def, 'echo', { text: 'over http' }, never()), {
      ok: true,
      summary: 'mcp:web/echo: 1 line',
      output: 'over http',
    });
    assert.equal((await hub.callTool(def, 'fail', {}, never())).summary, 'mcp:web/fail failed: it failed on purpose');
    assert.ok(web.requests.length > 0 && web.requests.every((h) => h.authorization === TOKEN));
  });

  it('says the server refused a wrong token, without the token', async () => {
    const wrong: McpServer = { name: 'web', url: web.url, headers: { Authorization: 'Bearer wrong-secret-999' } };
    await assert.rejects(hub.listTools(wrong, never()), (err: unknown) => {
      assert.ok(err instanceof McpUnavailable);
      assert.match(
        err.message,
        /^mcp server web at http:\/\/127\.0\.0\.1:\d+\/mcp refused the connection \(HTTP 401\)$/,
      );
      assert.ok(!`${err.message} ${err.hint}`.includes('wrong-secret-999'));
      return true;
    });
  });

  it('times a call out and cancels it on the server', async () => {
    const quick: McpServer = { ...def, callTimeoutSeconds: 0.5 };
    const r = await hub.callTool(quick, 'slow', { ms: 20_000 }, never());
    assert.equal(r.summary, 'mcp:web/slow timed out after 0.5 s');
    assert.equal(await waitUntil(() => web.state.cancelled >= 1, 5000), true);
    assert.equal((await hub.callTool(quick, 'echo', { text: 'after' }, never())).output, 'after');
  });

  it('fails the calls in flight when the connection drops, and opens a new session on next use', async () => {
    const session = (await hub.callTool(def, 'instance', {}, never())).output;
    const inFlight = hub.callTool(def, 'slow', { ms: 60_000 }, never());
    assert.equal(await waitUntil(() => web.state.running >= 1, 5000), true, 'the slow call reached the server');
    const crash = await hub.callTool(def, 'crash', {}, never());
    assert.equal(crash.ok, false);
    assert.match(
      crash.summary,
      /^mcp:web\/crash failed: the connection to mcp server web failed: .* \(restarted on next use\)$/,
    );
    const slow = await inFlight;
    assert.equal(slow.ok, false);
    assert.match(slow.summary, /the connection to mcp server web failed/);
    const next = await hub.callTool(def, 'instance', {}, never());
    assert.equal(next.ok, true, next.summary);
    assert.notEqual(next.output, session);
  });

  it('says a server cannot be reached', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(
      hub.listTools({ name: 'gone', url: `http://127.0.0.1:${port}/mcp?token=qs-secret-1` }, never()),
      (err: unknown) => {
        assert.ok(err instanceof McpUnavailable);
        assert.match(
          err.message,
          new RegExp(`^mcp server gone at http://127\\.0\\.0\\.1:${port}/mcp could not be reached`),
        );
        assert.ok(!err.message.includes('qs-secret-1'));
        return true;
      },
    );
  });
});

describe('SdkMcpHub start-up cost', () => {
  it('imports the MCP SDK only when a server is first used (no static import in its modules)', () => {
    const dir = fileURLToPath(new URL('../../../src/infrastructure/mcp/', import.meta.url));
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts'));
    assert.ok(files.includes('sdk-mcp.hub.ts') && files.includes('mcp-connection.ts'));
    for (const f of files) {
      const code = fs.readFileSync(path.join(dir, f), 'utf8');
      assert.doesNotMatch(code, /^\s*import\s(?!type\s)[^(;]*['"]@modelcontextprotocol\//m, f);
      assert.doesNotMatch(code, /^\s*export\s(?!type\s).*\sfrom\s+['"]@modelcontextprotocol\//m, f);
    }
    assert.match(fs.readFileSync(path.join(dir, 'mcp-connection.ts'), 'utf8'), /import\('@modelcontextprotocol\/sdk/);
  });
});

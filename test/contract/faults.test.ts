/**
 * Fault injection: storage made read-only, locked by another process, full, and the server killed
 * in the middle of a write burst. The requests the fault hits fail with a clear error (logged once,
 * with the correlation id the caller sees); everything else keeps working, and once the fault goes
 * the server works again without a restart; nothing acknowledged is lost to a kill.
 */
import { sqliteOf } from '../support/sqlite-of.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { buildApp, type App } from '../../src/main/app.ts';
import { databaseFile } from '../../src/main/paths.ts';
import { LOCAL_PRINCIPAL, type Logger } from '../../src/application/index.ts';
import { startHttpServer, tempDir, TOKEN } from '../support/harness.ts';
import { ECHO_FIRST_TURN_HINT as HINT } from '../../src/application/actors/echo.actor.ts';

interface Logged {
  level: string;
  obj: any;
  msg: string | undefined;
}

function capturingLogger(into: Logged[]): Logger {
  const at = (level: string) => (obj: object, msg?: string) => void into.push({ level, obj, msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const meta = { principal: LOCAL_PRINCIPAL, version: '1.0' as const, signal: new AbortController().signal };
let n = 0;
const call = async (app: App, method: string, params: unknown): Promise<any> => {
  const out = await app.dispatcher.dispatch({ jsonrpc: '2.0', id: ++n, method, params }, meta);
  assert.equal(out.kind, 'response');
  return (out as { response: unknown }).response;
};
const sendText = (app: App, text: string): Promise<any> =>
  call(app, 'SendMessage', { message: { messageId: `m-${++n}`, role: 'ROLE_USER', parts: [{ text }] } });
const reasonOf = (res: any): string | undefined => res.error?.data?.[0]?.reason ?? res.error?.data?.reason;
const correlationOf = (res: any): string | undefined =>
  res.error?.data?.[0]?.metadata?.correlationId ?? res.error?.data?.correlationId;

/** The failure every hit request must show: UNAVAILABLE, a message naming the cause, nothing internal. */
function assertStorageFailure(res: any, cause: RegExp): string {
  assert.ok(res.error, `expected an error, got ${JSON.stringify(res).slice(0, 300)}`);
  assert.equal(reasonOf(res), 'UNAVAILABLE', JSON.stringify(res));
  assert.match(res.error.message, cause);
  assert.doesNotMatch(JSON.stringify(res), /SQLITE_|INSERT|UPDATE|SqliteError|\/tmp\//);
  const id = correlationOf(res);
  assert.ok(id, 'a correlation id');
  return id;
}

describe('storage faults, in process', () => {
  let dir: string;
  let app: App;
  const logs: Logged[] = [];
  before(async () => {
    dir = tempDir();
    app = await buildApp({
      dataDir: dir,
      logger: capturingLogger(logs),
      busyTimeoutMs: 50,
      card: { endpoint: 'memory://', auth: 'none' },
    });
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a read-only database fails the writes clearly, keeps the reads, and recovers when writable again', async () => {
    const first = await sendText(app, 'before');
    assert.equal(first.result.task.status.state, 'TASK_STATE_COMPLETED');
    // As root, chmod does not stop a process that has the file open: query_only makes SQLite
    // refuse every write with the very error a read-only file gives (SQLITE_READONLY).
    sqliteOf(app).sqlite.pragma('query_only = 1');
    try {
      const failed = await sendText(app, 'while read-only');
      const id = assertStorageFailure(failed, /read-only/);
      const logged = logs.filter((l) => l.obj?.correlationId === id);
      assert.equal(logged.length, 1, 'logged once, under the id the caller got');
      assert.match(logged[0]?.msg ?? '', /read-only/);
      const session = await call(app, '_cleveragents/session/create', { title: 'no' });
      assertStorageFailure(session, /read-only/);
      const got = await call(app, 'GetTask', { id: first.result.task.id });
      assert.equal(got.result.status.state, 'TASK_STATE_COMPLETED', 'reads still work');
      assert.equal((await call(app, 'ListTasks', {})).result.totalSize, 1, 'nothing half-stored');
    } finally {
      sqliteOf(app).sqlite.pragma('query_only = 0');
    }
    const again = await sendText(app, 'after');
    assert.equal(again.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(again));
    assert.equal((await call(app, 'ListTasks', {})).result.totalSize, 2);
  });

  it('a database locked by another process fails the writes clearly and recovers when the lock goes', async () => {
    const other = new BetterSqlite3(databaseFile(dir));
    const before = (await call(app, 'ListTasks', {})).result.totalSize;
    other.exec('BEGIN EXCLUSIVE');
    try {
      assertStorageFailure(await sendText(app, 'while locked'), /locked/);
      // A stream hit by the same fault answers with the same error, not a hang or a reset.
      const out = await app.dispatcher.dispatch(
        {
          jsonrpc: '2.0',
          id: 'st',
          method: 'SendStreamingMessage',
          params: { message: { messageId: 'st-1', role: 'ROLE_USER', parts: [{ text: 'stream while locked' }] } },
        },
        meta,
      );
      assert.equal(out.kind, 'response');
      assertStorageFailure((out as { response: unknown }).response, /locked/);
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    const again = await sendText(app, 'after the lock');
    assert.equal(again.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(again));
    assert.equal((await call(app, 'ListTasks', {})).result.totalSize, before + 1);
  });
});

/** A tiny tmpfs for the data dir (root only); undefined where mounting is not allowed. */
function mountTiny(path: string, size: string): boolean {
  mkdirSync(path, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('a full disk, over HTTP', () => {
  const root = tempDir('ca-full-');
  const mnt = join(root, 'disk');
  const mounted = mountTiny(mnt, '4m');
  after(() => {
    if (mounted) {
      for (let i = 0; i < 20; i++) {
        try {
          execFileSync('umount', [mnt], { stdio: 'ignore' });
          break;
        } catch {
          execFileSync('sleep', ['0.1']);
        }
      }
    }
    rmSync(root, { recursive: true, force: true });
  });

  it(
    'fails the writes with a clear error, keeps serving, and recovers once space is freed',
    { skip: mounted ? false : 'needs root to mount a tmpfs' },
    async () => {
      const dataDir = join(mnt, 'data');
      const server = await startHttpServer({ dataDir });
      const post = async (body: unknown): Promise<any> =>
        (
          await fetch(`${server.baseUrl}/a2a`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
            body: JSON.stringify(body),
          })
        ).json();
      const send = (text: string): Promise<any> =>
        post({
          jsonrpc: '2.0',
          id: text,
          method: 'SendMessage',
          params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] } },
        });
      try {
        assert.equal((await send('first')).result.task.status.state, 'TASK_STATE_COMPLETED');
        // Fill the disk to the last byte.
        const filler = join(mnt, 'filler');
        const fd = openSync(filler, 'w');
        const block = Buffer.alloc(64 * 1024, 1);
        try {
          for (;;) writeSync(fd, block);
        } catch {
          for (;;) {
            try {
              writeSync(fd, Buffer.alloc(512, 1));
            } catch {
              break;
            }
          }
        } finally {
          closeSync(fd);
        }
        let failed: any;
        // SQLite may still fit a small write in pages it already has: write until the disk refuses.
        for (let i = 0; i < 50 && !failed; i++) {
          const res = await send(`full-${i}-${'x'.repeat(20_000)}`);
          if (res.error) failed = res;
        }
        assert.ok(failed, 'the disk refused a write');
        assertStorageFailure(failed, /disk is full|cannot be read or written/);
        assert.equal((await fetch(`${server.baseUrl}/health`)).status, 200, 'still serving');
        const listed = await post({ jsonrpc: '2.0', id: 'l', method: 'ListTasks', params: {} });
        assert.ok(listed.result.totalSize >= 1, 'reads still work');
        rmSync(filler);
        const again = await send('after');
        assert.equal(again.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(again).slice(0, 500));
        assert.match(server.stderr(), /storage failed/);
      } finally {
        await server.stop();
      }
    },
  );
});

describe('SIGKILL in the middle of a write burst', () => {
  it('loses no task that was acknowledged before the kill', async () => {
    const dataDir = tempDir();
    let server = await startHttpServer({ dataDir });
    const acked: Array<{ id: string; text: string }> = [];
    const post = (base: string, body: unknown): Promise<any> =>
      fetch(`${base}/a2a`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    try {
      const base = server.baseUrl;
      let killed = false;
      let sixty!: () => void;
      const sixtyAcked = new Promise<void>((r) => (sixty = r));
      const worker = async (w: number): Promise<void> => {
        for (let i = 0; i < 200 && !killed; i++) {
          const text = `burst ${w}-${i}`;
          try {
            const res = await post(base, {
              jsonrpc: '2.0',
              id: text,
              method: 'SendMessage',
              params: { message: { messageId: `b-${w}-${i}`, role: 'ROLE_USER', parts: [{ text }] } },
            });
            if (res.result?.task && acked.push({ id: res.result.task.id, text }) === 60) sixty();
          } catch {
            return; // the server is gone
          }
        }
      };
      const workers = Array.from({ length: 8 }, (_, w) => worker(w));
      // The kill comes at the 60th acknowledgement (or once every worker has given up).
      await Promise.race([sixtyAcked, Promise.all(workers)]);
      killed = true;
      await server.stop('SIGKILL');
      await Promise.all(workers);
      assert.ok(acked.length >= 60);

      server = await startHttpServer({ dataDir });
      for (const { id, text } of acked) {
        const got = await post(server.baseUrl, { jsonrpc: '2.0', id, method: 'GetTask', params: { id } });
        assert.equal(
          got.result?.status?.state,
          'TASK_STATE_COMPLETED',
          `task ${id} (${text}) after restart: ${JSON.stringify(got).slice(0, 200)}`,
        );
        const texts = (got.result.history ?? []).flatMap((m: any) => m.parts.map((p: any) => p.text ?? ''));
        assert.ok(texts.includes(text), `the message of ${id} survived`);
        const answer = (got.result.artifacts ?? []).flatMap((a: any) => a.parts.map((p: any) => p.text ?? '')).join('');
        assert.equal(answer, `You said: ${text}${HINT}`, `the agent's answer to ${id} survived`);
      }
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { checkGetResult, checkSendResult, getTaskRequest, rpcBody, sendMessageRequest } from '../../bench/lib/a2a.ts';
import { postBytes, RawConnection } from '../../bench/lib/http-client.ts';
import { BENCH_TOKEN } from '../../bench/servers/workload.ts';
import { repoPath } from '../support/paths.ts';

describe('the persisted floor answers what the bench load generator sends', () => {
  let dir: string;
  let child: ChildProcess;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-persisted-floor-'));
    child = spawn(process.execPath, [repoPath('bench/servers/persisted-floor.ts'), dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`the persisted floor exited with ${code}`)));
    });
  });

  after(() => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores each SendMessage task with its four events before answering, and GetTask reads it back', async () => {
    const conns = await Promise.all([1, 2, 3].map(() => RawConnection.open(port)));
    try {
      // Three requests in flight at once: they may share one commit, and each is answered after it.
      const ids = await Promise.all(conns.map(async (c) => checkSendResult(await c.request(sendMessageRequest(port)))));
      const db = new BetterSqlite3(join(dir, 'persisted-floor.db'), { readonly: true });
      try {
        for (const id of ids) {
          const n = db.prepare('select count(*) as n from events where task_id = ?').get(id) as { n: number };
          assert.equal(n.n, 4);
        }
      } finally {
        db.close();
      }
      for (const id of ids) checkGetResult(await (conns[0] as RawConnection).request(getTaskRequest(port, id)), id);
    } finally {
      for (const c of conns) c.close();
    }
  });

  it('answers an unknown task, an unknown method and a request without the token with errors', async () => {
    const c = await RawConnection.open(port);
    try {
      const unknown = await c.request(getTaskRequest(port, 'no-such-task'));
      assert.equal(JSON.parse(unknown.body.toString('utf8')).error.code, -32001);
      const headers = { Authorization: `Bearer ${BENCH_TOKEN}` };
      const method = await c.request(postBytes(port, '/a2a', headers, rpcBody('ListTasks', {})));
      assert.equal(JSON.parse(method.body.toString('utf8')).error.code, -32601);
      const denied = await c.request(
        postBytes(port, '/a2a', { Authorization: 'Bearer wrong' }, rpcBody('GetTask', {})),
      );
      assert.equal(denied.status, 401);
    } finally {
      c.close();
    }
  });
});

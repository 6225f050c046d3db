/**
 * The second half of workload 5: resident memory with 10,000 idle SSE subscriptions. Our server
 * runs builtin/conformance (a task stays WORKING until cancelled); we start 10,000 tasks, subscribe
 * to each once (SubscribeToTask), wait for every stream's first event, read the server's RSS, then
 * close them all. The floor holds the same number of open SSE responses.
 */
import { randomUUID } from 'node:crypto';
import { BenchError, resultOf, rpcBody, subscribeRequest } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { postBytes, RawConnection, SseParser } from '../lib/http-client.ts';
import { pool, runLoad } from '../lib/load.ts';
import { cpuMs, rssMb, type Server } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { startFloor, startOurs, tempDir } from '../lib/servers.ts';
import { BENCH_TOKEN } from '../servers/workload.ts';

const HEADERS = { Authorization: `Bearer ${BENCH_TOKEN}`, 'A2A-Version': '1.0' };

/** Starts `count` tasks that stay working; returns their ids. */
async function workingTasks(server: Server, count: number): Promise<string[]> {
  const ids: string[] = [];
  await runLoad({
    port: server.port,
    connections: 16,
    maxRequests: count,
    maxMs: 120_000,
    request: () =>
      postBytes(
        server.port,
        '/a2a',
        HEADERS,
        rpcBody('SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hold' }] } }),
      ),
    validate: (res) => {
      const task = resultOf(res, 'SendMessage')['task'] as { id?: string; status?: { state?: string } } | undefined;
      if (!task?.id || task.status?.state !== 'TASK_STATE_WORKING')
        throw new BenchError(`expected a working task: ${JSON.stringify(task).slice(0, 200)}`);
      ids.push(task.id);
    },
  });
  if (ids.length !== count) throw new BenchError(`started ${ids.length} of ${count} tasks`);
  return ids;
}

/** Opens one subscription per id; resolves when each stream has delivered its first event. */
async function subscribeAll(server: Server, ids: string[]): Promise<RawConnection[]> {
  const conns: RawConnection[] = [];
  await pool(ids, 200, async (id) => {
    const c = await RawConnection.open(server.port);
    conns.push(c);
    await new Promise<void>((resolve, reject) => {
      let seen = false;
      const parser = new SseParser((data) => {
        if (seen) return;
        seen = true;
        const env = JSON.parse(data) as { result?: { task?: { id?: string } } };
        if (env.result?.task?.id !== id)
          reject(new BenchError(`subscription to ${id} began with ${data.slice(0, 200)}`));
        else resolve();
      });
      c.request(subscribeRequest(server.port, id), { onData: (p) => parser.push(p) }).then(
        () => reject(new BenchError(`subscription to ${id} ended early`)),
        (err: unknown) => {
          if (!seen) reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  });
  return conns;
}

async function holdStreams(
  server: Server,
  ids: string[],
): Promise<{ before: number; during: number; idleCpuPct: number }> {
  const before = rssMb(server.pid);
  const conns = await subscribeAll(server, ids);
  // Let the server settle (timers armed, buffers flushed) before reading its memory, then see
  // what holding the streams costs while nothing happens on them.
  await new Promise((r) => setTimeout(r, 2_000));
  const during = rssMb(server.pid);
  const c0 = cpuMs(server.pid);
  await new Promise((r) => setTimeout(r, 3_000));
  const idleCpuPct = ((cpuMs(server.pid) - c0) / 3_000) * 100;
  for (const c of conns) c.close();
  const { exitCode, signalCode } = server.child;
  if (exitCode !== null || signalCode !== null)
    throw new BenchError(
      `${server.name} exited (${exitCode ?? signalCode}) while it held ${ids.length} streams:\n${server.stderr().slice(-2000)}`,
    );
  return { before, during, idleCpuPct };
}

export async function sseMemoryWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const n = cfg.sseSubscriptions;
  const servers: Server[] = [];
  try {
    const ours = await startOurs(tempDir('sse'), 'builtin/conformance');
    servers.push(ours);
    const floor = await startFloor();
    servers.push(floor);
    const ids = await workingTasks(ours, n);
    const o = await holdStreams(ours, ids);
    const f = await holdStreams(floor, ids);
    log(
      `SSE x${n}: ours ${o.before.toFixed(0)} → ${o.during.toFixed(0)} MB, floor ${f.before.toFixed(0)} → ${f.during.toFixed(0)} MB`,
    );
    report.add({
      workload: 'memory',
      metric: `RSS with ${n.toLocaleString('en-US')} idle SSE streams`,
      unit: 'MB',
      ours: o.during,
      floor: f.during,
    });
    report.add({
      workload: 'memory',
      metric: `RSS added by ${n.toLocaleString('en-US')} idle SSE streams`,
      unit: 'MB',
      ours: o.during - o.before,
      floor: f.during - f.before,
    });
    report.add({
      workload: 'memory',
      metric: `server CPU while ${n.toLocaleString('en-US')} SSE streams idle`,
      unit: '%',
      ours: o.idleCpuPct,
      floor: f.idleCpuPct,
    });
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

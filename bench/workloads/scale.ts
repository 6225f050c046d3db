/**
 * Workload 6: GetTask and ListTasks (the first page, and a page 90% of the way down) with 1k, 100k
 * and 1M stored tasks, one request in flight. One server per size, all running at once on the
 * server core; rounds alternate between them.
 */
import { BenchError, checkEchoTask, getTaskRequest, listTasksRequest, resultOf } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { RawConnection } from '../lib/http-client.ts';
import type { Server } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { seed, type Seeded } from '../lib/seed.ts';
import { startOurs } from '../lib/servers.ts';
import { median, percentile } from '../lib/stats.ts';
import { SEND_TEXT } from '../servers/workload.ts';

type Op = 'get' | 'list-first' | 'list-deep';
const OPS: Op[] = ['get', 'list-first', 'list-deep'];

/** The page token our server issues for a position (base64url of [updatedAt, id]; white-box). */
const tokenFor = (p: { updatedAt: string; id: string }): string =>
  Buffer.from(JSON.stringify([p.updatedAt, p.id]), 'utf8').toString('base64url');

async function latency(server: Server, s: Seeded, op: Op, count: number, ms: number): Promise<number> {
  const c = await RawConnection.open(server.port);
  const times: number[] = [];
  const deadline = performance.now() + ms;
  try {
    for (let i = 0; times.length < count && performance.now() < deadline; i++) {
      const id = s.sampleIds[(i * 7919) % s.sampleIds.length] as string;
      const req =
        op === 'get'
          ? getTaskRequest(server.port, id)
          : listTasksRequest(
              server.port,
              op === 'list-first' ? { pageSize: 50 } : { pageSize: 50, pageToken: tokenFor(s.deep) },
            );
      const t0 = performance.now();
      const res = await c.request(req);
      times.push(performance.now() - t0);
      const result = resultOf(res, op);
      if (op === 'get') {
        if (result['id'] !== id) throw new BenchError(`GetTask: asked for ${id}, got ${String(result['id'])}`);
        checkEchoTask(result, SEND_TEXT, 'GetTask');
      } else {
        const tasks = result['tasks'] as Array<{ id: string }>;
        if (tasks.length !== 50) throw new BenchError(`ListTasks: ${tasks.length} tasks on a page of 50`);
        if (result['totalSize'] !== s.count)
          throw new BenchError(`ListTasks: totalSize ${String(result['totalSize'])}, stored ${s.count}`);
        if (op === 'list-deep' && tasks[0]?.id !== s.deep.nextId)
          throw new BenchError(`ListTasks deep page starts at ${tasks[0]?.id}, expected ${s.deep.nextId}`);
      }
    }
  } finally {
    c.close();
  }
  return percentile(
    times.sort((a, b) => a - b),
    0.5,
  );
}

export async function scaleWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const seeded: Seeded[] = [];
  for (const n of cfg.scaleSizes) seeded.push(await seed(n, log));
  const servers: Server[] = [];
  try {
    // Retention off: the seeded tasks are dated 2025, and the default 30-day sweep would delete
    // them (from the cached seed too) seconds after the start.
    const noRetention = { CLEVERAGENTS_RETENTION_DAYS: '0', CLEVERAGENTS_RETENTION_MAX_TASKS: '0' };
    for (const s of seeded) servers.push(await startOurs(s.dataDir, undefined, noRetention));
    const per = cfg.quick ? 100 : 300;
    for (let i = 0; i < servers.length; i++)
      for (const op of OPS) await latency(servers[i] as Server, seeded[i] as Seeded, op, 30, 5_000);
    const runs = seeded.map(() => ({ get: [] as number[], 'list-first': [] as number[], 'list-deep': [] as number[] }));
    for (let round = 0; round < cfg.rounds; round++) {
      for (let k = 0; k < servers.length; k++) {
        const i = (k + round) % servers.length;
        for (const op of OPS)
          runs[i]?.[op].push(await latency(servers[i] as Server, seeded[i] as Seeded, op, per, cfg.windowMs * 2));
      }
    }
    const label: Record<Op, string> = {
      get: 'GetTask',
      'list-first': 'ListTasks first page',
      'list-deep': 'ListTasks page at 90%',
    };
    for (const op of OPS) {
      const p50s = runs.map((r) => median(r[op]));
      seeded.forEach((s, i) => {
        report.add({
          workload: `scale ${s.count.toLocaleString('en-US')} tasks`,
          metric: `${label[op]} p50, 1 in flight`,
          unit: 'ms',
          ours: p50s[i] as number,
        });
      });
      const [small, large] = [seeded[0], seeded[seeded.length - 1]];
      if (small && large && large !== small)
        report.add({
          workload: 'scale',
          metric: `${label[op]} p50 at ${large.count.toLocaleString('en-US')} tasks ÷ at ${small.count.toLocaleString('en-US')}`,
          unit: '',
          ours: (p50s[p50s.length - 1] as number) / (p50s[0] as number),
        });
      log(`${label[op]}: ${seeded.map((s, i) => `${s.count}: ${(p50s[i] as number).toFixed(2)} ms`).join(', ')}`);
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/**
 * Workloads 1, 2 and the first half of 5: SendMessage (our tasks persisted in SQLite, the
 * reference's in memory), GetTask on stored tasks, and RSS growth per 1,000 stored tasks.
 */
import { checkGetResult, checkSendResult, getTaskRequest, sendMessageRequest } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { runLoad, type LoadResult } from '../lib/load.ts';
import { cpuMs, rssMb, type Server } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { startFloor, startOurs, startReference, tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';

interface Measured extends LoadResult {
  cpuPerReqUs: number;
}

type Who = 'ours' | 'reference' | 'floor';
const WHO: Who[] = ['ours', 'reference', 'floor'];

/** Ids of tasks each server stored (from validated SendMessage answers), for GetTask. */
const ids: Record<Who, string[]> = { ours: [], reference: [], floor: [] };

async function measure(
  server: Server,
  cfg: BenchConfig,
  ms: number,
  kind: 'send' | 'get',
  who: Who,
  connections = cfg.connections,
): Promise<Measured> {
  const pool = ids[who];
  const keep = (id: string): void => {
    if (pool.length < 5_000) pool.push(id);
  };
  const c0 = cpuMs(server.pid);
  const r = await runLoad({
    port: server.port,
    connections,
    maxRequests: cfg.maxRequests,
    maxMs: ms,
    request: (i) =>
      kind === 'send' ? sendMessageRequest(server.port) : getTaskRequest(server.port, pool[i % pool.length] as string),
    validate: (res, i) =>
      kind === 'send' ? keep(checkSendResult(res)) : checkGetResult(res, pool[i % pool.length] as string),
  });
  const cpu = cpuMs(server.pid) - c0;
  return { ...r, cpuPerReqUs: (cpu * 1000) / r.requests };
}

export async function unaryWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const servers = {} as Record<Who, Server>;
  try {
    servers.ours = await startOurs(tempDir('unary'));
    servers.reference = await startReference();
    servers.floor = await startFloor();
    // Idle memory: each server just started, nothing served yet, after a moment to settle.
    await new Promise((res) => setTimeout(res, 1_000));
    const idle = {
      ours: rssMb(servers.ours.pid),
      reference: rssMb(servers.reference.pid),
      floor: rssMb(servers.floor.pid),
    };
    log(`idle RSS: ${WHO.map((w) => `${w} ${idle[w].toFixed(0)} MB`).join(', ')}`);
    report.add({
      workload: 'memory',
      metric: 'RSS of a freshly started server, idle',
      unit: 'MB',
      ...idle,
      target: '<= 1.0x reference',
      met: idle.ours <= idle.reference,
    });
    // Each kind warmed to its steady rate (see BenchConfig.warmupMs); GetTask reads what the
    // SendMessage warm-up stored.
    for (const kind of ['send', 'get'] as const)
      for (const w of WHO) await measure(servers[w], cfg, cfg.warmupMs, kind, w);

    for (const kind of ['send', 'get'] as const) {
      // Latency and CPU at the reference concurrency; throughput at each server's best of a few
      // concurrencies (group commit gains from more requests in flight, the reference does not).
      const levels = [cfg.connections, ...cfg.peakConnections.filter((c) => c !== cfg.connections)];
      const byLevel = new Map<number, Record<Who, Measured[]>>(
        levels.map((c) => [c, { ours: [], reference: [], floor: [] }]),
      );
      for (let round = 0; round < cfg.rounds; round++) {
        // Alternate the order so no server always runs first (or right after another's GC).
        const order = WHO.map((_, i) => WHO[(i + round) % WHO.length] as Who);
        for (const c of levels)
          for (const w of order) byLevel.get(c)?.[w].push(await measure(servers[w], cfg, cfg.windowMs, kind, w, c));
      }
      const runs = byLevel.get(cfg.connections) as Record<Who, Measured[]>;
      const med = (w: Who, k: keyof Measured): number => median(runs[w].map((r) => r[k]));
      const peak = (w: Who): { rps: number; at: number } =>
        levels
          .map((c) => ({ rps: median((byLevel.get(c) as Record<Who, Measured[]>)[w].map((r) => r.rps)), at: c }))
          .reduce((a, b) => (b.rps > a.rps ? b : a));
      const name = kind === 'send' ? 'SendMessage' : 'GetTask';
      log(
        `${name}: ${WHO.map((w) => `${w} ${med(w, 'rps').toFixed(0)} req/s`).join(', ')} (client CPU ${(
          median(runs.floor.map((r) => r.clientCpuMs / r.elapsedMs)) * 100
        ).toFixed(0)}% during the floor)`,
      );
      const best = { ours: peak('ours'), reference: peak('reference'), floor: peak('floor') };
      const rps = { ours: best.ours.rps, reference: best.reference.rps, floor: best.floor.rps };
      log(`${name} peak: ${WHO.map((w) => `${w} ${best[w].rps.toFixed(0)} req/s @${best[w].at}`).join(', ')}`);
      report.add({
        workload: kind === 'send' ? 'SendMessage (ours persisted)' : 'GetTask',
        metric: `peak throughput, best of ${levels.join('/')} conns (ours @${best.ours.at}, ref @${best.reference.at}, floor @${best.floor.at})`,
        unit: 'req/s',
        ...rps,
        target: kind === 'send' ? undefined : '>= 0.5x floor',
        met: kind === 'send' ? undefined : rps.ours >= 0.5 * rps.floor,
      });
      // SendMessage's target holds at each concurrency, ours against the reference at the same one.
      if (kind === 'send')
        for (const c of [...levels].sort((a, b) => a - b)) {
          const at = byLevel.get(c) as Record<Who, Measured[]>;
          const r = (w: Who): number => median(at[w].map((m) => m.rps));
          report.add({
            workload: 'SendMessage (ours persisted)',
            metric: `throughput @${c} conns`,
            unit: 'req/s',
            ours: r('ours'),
            reference: r('reference'),
            floor: r('floor'),
            target: '>= 2.5x reference',
            met: r('ours') >= 2.5 * r('reference'),
          });
        }
      for (const [k, metric, unit] of [
        ['p50Ms', 'latency p50', 'ms'],
        ['p99Ms', 'latency p99', 'ms'],
        ['cpuPerReqUs', 'server CPU / request', 'µs'],
      ] as const) {
        report.add({
          workload: name,
          metric: `${metric} @${cfg.connections} conns`,
          unit,
          ours: med('ours', k),
          reference: med('reference', k),
          floor: med('floor', k),
        });
      }
    }

    // RSS per 1,000 stored tasks: store more tasks in steps, sample resident memory after each step,
    // and fit a line (the garbage collector's sawtooth makes a before/after difference noisy).
    const extra = cfg.quick ? 15_000 : 40_000;
    const steps = 5;
    const growth = {} as Record<Who, number>;
    for (const w of WHO) {
      const xs: number[] = [0];
      const ys: number[] = [rssMb(servers[w].pid)];
      let stored = 0;
      for (let k = 0; k < steps; k++) {
        const r = await runLoad({
          port: servers[w].port,
          connections: cfg.connections,
          maxRequests: extra / steps,
          maxMs: 60_000,
          request: () => sendMessageRequest(servers[w].port),
          validate: (res) => void checkSendResult(res),
        });
        stored += r.requests;
        await new Promise((res) => setTimeout(res, 200));
        xs.push(stored);
        ys.push(rssMb(servers[w].pid));
      }
      growth[w] = slope(xs, ys) * 1000;
    }
    report.add({
      workload: 'memory',
      metric: `RSS growth per 1k stored tasks (fit over ${extra.toLocaleString('en-US')} more)`,
      unit: 'MB',
      ...growth,
      target: '<= 1 MB',
      met: growth.ours <= 1,
    });
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

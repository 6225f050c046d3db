/**
 * Workloads 1, 2 and the first half of 5: SendMessage (our tasks persisted in SQLite, the persisted
 * floor's too, the reference's and the bare floor's in memory), GetTask on stored tasks, idle RSS,
 * and RSS growth per 1,000 stored tasks.
 */
import { rmSync } from 'node:fs';
import { checkGetResult, checkSendResult, getTaskRequest, sendMessageRequest } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { runLoad, type LoadResult } from '../lib/load.ts';
import { cpuMs, rssMb, type Server } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { startFloor, startOurs, startPersistedFloor, startReference, tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';

interface Measured extends LoadResult {
  cpuPerReqUs: number;
}

type Who = 'ours' | 'reference' | 'floor' | 'persisted';
const WHO: Who[] = ['ours', 'reference', 'floor', 'persisted'];
const each = <T>(f: (w: Who) => T): Record<Who, T> => ({
  ours: f('ours'),
  reference: f('reference'),
  floor: f('floor'),
  persisted: f('persisted'),
});

/** Ids of tasks each server stored (from validated SendMessage answers), for GetTask. */
const ids: Record<Who, string[]> = each(() => []);

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
  const dirs = { ours: tempDir('unary'), persisted: tempDir('persisted') };
  try {
    servers.ours = await startOurs(dirs.ours);
    servers.reference = await startReference();
    servers.floor = await startFloor();
    servers.persisted = await startPersistedFloor(dirs.persisted);
    // Idle memory: each server just started, nothing served yet, after a moment to settle.
    await new Promise((res) => setTimeout(res, 1_000));
    const idle = each((w) => rssMb(servers[w].pid));
    log(`idle RSS: ${WHO.map((w) => `${w} ${idle[w].toFixed(0)} MB`).join(', ')}`);
    report.add({ workload: 'memory', metric: 'RSS of a freshly started server, idle', unit: 'MB', ...idle });
    // Each kind warmed to its steady rate (see BenchConfig.warmupMs); GetTask reads what the
    // SendMessage warm-up stored.
    for (const kind of ['send', 'get'] as const)
      for (const w of WHO) await measure(servers[w], cfg, cfg.warmupMs, kind, w);

    for (const kind of ['send', 'get'] as const) {
      // Latency and CPU at the reference concurrency; throughput at each concurrency and at each
      // server's best of them (group commit gains from more requests in flight, the reference does not).
      const levels = [cfg.connections, ...cfg.peakConnections.filter((c) => c !== cfg.connections)];
      const byLevel = new Map<number, Record<Who, Measured[]>>(levels.map((c) => [c, each(() => [])]));
      const at = (c: number): Record<Who, Measured[]> => byLevel.get(c) as Record<Who, Measured[]>;
      for (let round = 0; round < cfg.rounds; round++) {
        // Alternate the order so no server always runs first (or right after another's GC).
        const order = WHO.map((_, i) => WHO[(i + round) % WHO.length] as Who);
        for (const c of levels)
          for (const w of order) at(c)[w].push(await measure(servers[w], cfg, cfg.windowMs, kind, w, c));
      }
      const runs = at(cfg.connections);
      const med = (w: Who, k: keyof Measured): number => median(runs[w].map((r) => r[k]));
      const rpsAt = (c: number, w: Who): number => median(at(c)[w].map((m) => m.rps));
      const name = kind === 'send' ? 'SendMessage' : 'GetTask';
      log(
        `${name}: ${WHO.map((w) => `${w} ${med(w, 'rps').toFixed(0)} req/s`).join(', ')} (client CPU ${(
          median(runs.floor.map((r) => r.clientCpuMs / r.elapsedMs)) * 100
        ).toFixed(0)}% during the floor)`,
      );
      for (const c of [...levels].sort((a, b) => a - b))
        report.add({ workload: name, metric: `throughput @${c} conns`, unit: 'req/s', ...each((w) => rpsAt(c, w)) });
      const best = each((w) =>
        levels.map((c) => ({ rps: rpsAt(c, w), at: c })).reduce((a, b) => (b.rps > a.rps ? b : a)),
      );
      log(`${name} peak: ${WHO.map((w) => `${w} ${best[w].rps.toFixed(0)} req/s @${best[w].at}`).join(', ')}`);
      report.add({
        workload: name,
        metric: `peak throughput, best of ${levels.join('/')} conns (${WHO.map((w) => `${w} @${best[w].at}`).join(', ')})`,
        unit: 'req/s',
        ...each((w) => best[w].rps),
      });
      for (const [k, metric, unit] of [
        ['p50Ms', 'latency p50', 'ms'],
        ['p99Ms', 'latency p99', 'ms'],
        ['cpuPerReqUs', 'server CPU / request', 'µs'],
      ] as const) {
        report.add({ workload: name, metric: `${metric} @${cfg.connections} conns`, unit, ...each((w) => med(w, k)) });
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
    });
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
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

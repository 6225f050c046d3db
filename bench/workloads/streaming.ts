/**
 * Workload 3: SendStreamingMessage answered by n artifact events (n = 10, 100, 1,000): events/s
 * with several streams in flight, server CPU per event, and the time to the first event with one
 * stream in flight.
 */
import { runStream, streamRequest } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { RawConnection } from '../lib/http-client.ts';
import { cpuMs, type Server } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { startFloor, startOursStream, startReference, tempDir } from '../lib/servers.ts';
import { median, percentile } from '../lib/stats.ts';
import { streamText } from '../servers/workload.ts';

type Who = 'ours' | 'reference' | 'floor';
const WHO: Who[] = ['ours', 'reference', 'floor'];

interface Window {
  eventsPerSec: number;
  cpuPerEventUs: number;
  streams: number;
}

async function window(server: Server, n: number, connections: number, ms: number, maxStreams: number): Promise<Window> {
  const conns = await Promise.all(Array.from({ length: connections }, () => RawConnection.open(server.port)));
  let events = 0;
  let streams = 0;
  const c0 = cpuMs(server.pid);
  const t0 = performance.now();
  const deadline = t0 + ms;
  try {
    await Promise.all(
      conns.map(async (c) => {
        while (streams < maxStreams && performance.now() < deadline) {
          streams++;
          // Not `events += await …`: that reads `events` before the await and loses the other
          // connections' counts.
          const outcome = await runStream(c, streamRequest(server.port, streamText(n)), n);
          events += outcome.events;
        }
      }),
    );
  } finally {
    for (const c of conns) c.close();
  }
  const elapsed = performance.now() - t0;
  const cpu = cpuMs(server.pid) - c0;
  return { eventsPerSec: (events / elapsed) * 1000, cpuPerEventUs: (cpu * 1000) / events, streams };
}

/** Time to first event, one stream at a time: p50 over `count` streams (bounded by `ms`). */
async function firstEvent(server: Server, n: number, count: number, ms: number): Promise<number> {
  const c = await RawConnection.open(server.port);
  const times: number[] = [];
  const deadline = performance.now() + ms;
  try {
    while (times.length < count && performance.now() < deadline) {
      times.push((await runStream(c, streamRequest(server.port, streamText(n)), n)).firstEventMs);
    }
  } finally {
    c.close();
  }
  return percentile(
    times.sort((a, b) => a - b),
    0.5,
  );
}

export async function streamingWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const servers = {} as Record<Who, Server>;
  try {
    servers.ours = await startOursStream(tempDir('stream'));
    servers.reference = await startReference();
    servers.floor = await startFloor();

    const cpuByN: Record<Who, number[]> = { ours: [], reference: [], floor: [] };
    for (const n of cfg.streamSizes) {
      const runs: Record<Who, Window[]> = { ours: [], reference: [], floor: [] };
      // Warmed at this n (a stream's set-up and its events run different code; see BenchConfig.warmupMs).
      for (const w of WHO) await window(servers[w], n, cfg.streamConnections, cfg.warmupMs, 1_000_000);
      for (let round = 0; round < cfg.rounds; round++) {
        const order = WHO.map((_, i) => WHO[(i + round) % WHO.length] as Who);
        for (const w of order) runs[w].push(await window(servers[w], n, cfg.streamConnections, cfg.windowMs, 100_000));
      }
      const med = (w: Who, k: keyof Window): number => median(runs[w].map((r) => r[k]));
      const eps = {
        ours: med('ours', 'eventsPerSec'),
        reference: med('reference', 'eventsPerSec'),
        floor: med('floor', 'eventsPerSec'),
      };
      log(`stream n=${n}: ${WHO.map((w) => `${w} ${eps[w].toFixed(0)} events/s`).join(', ')}`);
      report.add({
        workload: `SendStreamingMessage n=${n}`,
        metric: `events/s @${cfg.streamConnections} streams`,
        unit: '',
        ...eps,
      });
      const cpu = {
        ours: med('ours', 'cpuPerEventUs'),
        reference: med('reference', 'cpuPerEventUs'),
        floor: med('floor', 'cpuPerEventUs'),
      };
      for (const w of WHO) cpuByN[w].push(cpu[w]);
      report.add({ workload: `SendStreamingMessage n=${n}`, metric: 'server CPU / event', unit: 'µs', ...cpu });
    }
    // Flat means the cost of an event does not grow with the length of the stream (the reference
    // copies the whole task per event). Fixed per-stream work spread over more events makes the
    // figure fall below 1, which is no growth either.
    const first = cfg.streamSizes[0] as number;
    const last = cfg.streamSizes[cfg.streamSizes.length - 1] as number;
    const growth = (w: Who): number => (cpuByN[w][cpuByN[w].length - 1] as number) / (cpuByN[w][0] as number);
    report.add({
      workload: 'SendStreamingMessage',
      metric: `CPU/event at n=${last} ÷ at n=${first}`,
      unit: '',
      ours: growth('ours'),
      reference: growth('reference'),
      floor: growth('floor'),
    });

    const ttfe: Record<Who, number[]> = { ours: [], reference: [], floor: [] };
    for (let round = 0; round < cfg.rounds; round++) {
      const order = WHO.map((_, i) => WHO[(i + round) % WHO.length] as Who);
      for (const w of order) ttfe[w].push(await firstEvent(servers[w], 100, cfg.quick ? 30 : 100, cfg.windowMs * 2));
    }
    const t = { ours: median(ttfe.ours), reference: median(ttfe.reference), floor: median(ttfe.floor) };
    report.add({
      workload: 'SendStreamingMessage n=100',
      metric: 'time to first event p50, 1 in flight',
      unit: 'ms',
      ...t,
    });
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

/**
 * PostgreSQL against the embedded SQLite default, in the same run (alternating rounds): SendMessage
 * and GetTask throughput, SendMessage spread over two instances of one database against one (with
 * the machine's core count: both instances and the database share it), streaming events/s, the
 * cross-instance event delay — an event stored by instance A, received by a client subscribed on
 * instance B of the same database (p50/p99) — and the round trips a blocking SendMessage makes
 * (postgres-writes.ts). Needs a PostgreSQL server: `--pg-url=`, CA_BENCH_PG_URL or CA_TEST_PG_URL
 * (an admin URL; `source .ci/postgres.sh` starts a throwaway one); without it the workload says so
 * and is skipped.
 */
import { availableParallelism } from 'node:os';
import {
  checkGetResult,
  checkSendResult,
  getTaskRequest,
  runStream,
  sendMessageRequest,
  streamRequest,
} from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { RawConnection } from '../lib/http-client.ts';
import { runLoad, type LoadResult } from '../lib/load.ts';
import { machineLoad, setupPinning, type Server } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { startOurs, startOursStream, tempDir } from '../lib/servers.ts';
import { median, percentile } from '../lib/stats.ts';
import { BENCH_TOKEN, streamText } from '../servers/workload.ts';
import { readSse } from '../../src/protocol/client/sse.ts';
import { createPgDatabase } from '../../test/support/postgres.ts';
import { postgresWrites } from './postgres-writes.ts';

type Engine = 'SQLite' | 'PostgreSQL';
const ENGINES: Engine[] = ['SQLite', 'PostgreSQL'];

export async function postgresWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const adminUrl = cfg.pgUrl;
  if (!adminUrl) {
    const why =
      'no PostgreSQL (pass --pg-url= or set CA_BENCH_PG_URL or CA_TEST_PG_URL; `source .ci/postgres.sh` starts one)';
    log(`skipped: ${why}`);
    report.note(`postgres rows skipped: ${why}`);
    return;
  }
  const made = await createPgDatabase('ca_bench', adminUrl);
  const pgEnv = { CLEVERAGENTS_DATABASE_URL: made.url };
  const servers: Server[] = [];
  try {
    const ours: Record<Engine, Server> = {
      SQLite: await startOurs(tempDir('pg-sqlite')),
      PostgreSQL: await startOurs(tempDir('pg-pg'), undefined, pgEnv),
    };
    servers.push(ours.SQLite, ours.PostgreSQL);
    await unary(cfg, report, log, ours);
    const second = await startOurs(tempDir('pg-pg-b'), undefined, pgEnv);
    servers.push(second);
    await twoInstances(cfg, report, log, ours.PostgreSQL, second);
    const streaming: Record<Engine, Server> = {
      SQLite: await startOursStream(tempDir('pg-stream-sqlite')),
      PostgreSQL: await startOursStream(tempDir('pg-stream-pg'), pgEnv),
    };
    servers.push(streaming.SQLite, streaming.PostgreSQL);
    await stream(cfg, report, log, streaming);
    // A second instance on the same database: the cross-instance delay.
    const b = await startOursStream(tempDir('pg-stream-b'), pgEnv);
    servers.push(b);
    await crossInstance(cfg, report, log, streaming.PostgreSQL, b);
    await postgresWrites(cfg, report, log, made.url);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await made.drop().catch(() => {});
  }
}

async function unary(
  cfg: BenchConfig,
  report: Report,
  log: (s: string) => void,
  ours: Record<Engine, Server>,
): Promise<void> {
  const ids: Record<Engine, string[]> = { SQLite: [], PostgreSQL: [] };
  const measure = (e: Engine, kind: 'send' | 'get', ms: number): Promise<LoadResult> => {
    const server = ours[e];
    const pool = ids[e];
    return runLoad({
      port: server.port,
      connections: cfg.connections,
      maxRequests: cfg.maxRequests,
      maxMs: ms,
      request: (i) =>
        kind === 'send'
          ? sendMessageRequest(server.port)
          : getTaskRequest(server.port, pool[i % pool.length] as string),
      validate: (res, i) => {
        if (kind === 'get') return checkGetResult(res, pool[i % pool.length] as string);
        const id = checkSendResult(res);
        if (pool.length < 5_000) pool.push(id);
      },
    });
  };
  for (const kind of ['send', 'get'] as const) for (const e of ENGINES) await measure(e, kind, cfg.warmupMs);
  for (const kind of ['send', 'get'] as const) {
    const runs: Record<Engine, LoadResult[]> = { SQLite: [], PostgreSQL: [] };
    for (let round = 0; round < cfg.rounds; round++) {
      const order = round % 2 === 0 ? ENGINES : [...ENGINES].reverse();
      for (const e of order) runs[e].push(await measure(e, kind, cfg.windowMs));
    }
    const label = kind === 'send' ? 'SendMessage' : 'GetTask';
    const rps = (e: Engine): number => median(runs[e].map((r) => r.rps));
    const p50 = (e: Engine): number => median(runs[e].map((r) => r.p50Ms));
    log(`${label}: SQLite ${rps('SQLite').toFixed(0)} req/s, PostgreSQL ${rps('PostgreSQL').toFixed(0)} req/s`);
    report.add({
      workload: `${label} on PostgreSQL`,
      metric: `throughput @${cfg.connections} conns (reference column: SQLite)`,
      unit: 'req/s',
      ours: rps('PostgreSQL'),
      reference: rps('SQLite'),
    });
    report.add({
      workload: `${label} on PostgreSQL`,
      metric: `latency p50 @${cfg.connections} conns (reference column: SQLite)`,
      unit: 'ms',
      ours: p50('PostgreSQL'),
      reference: p50('SQLite'),
    });
  }
}

/** SendMessage throughput with the same connections spread over two instances of one database, against one. */
async function twoInstances(
  cfg: BenchConfig,
  report: Report,
  log: (s: string) => void,
  a: Server,
  b: Server,
): Promise<void> {
  const sides = { one: [a.port], two: [a.port, b.port] };
  const measure = (ports: number[], ms: number): Promise<LoadResult> =>
    runLoad({
      port: a.port,
      ports,
      connections: cfg.connections,
      maxRequests: cfg.maxRequests,
      maxMs: ms,
      request: (_i, port) => sendMessageRequest(port),
      validate: (res) => void checkSendResult(res),
    });
  // B's warm-up; A had its own in unary().
  await measure([b.port], cfg.warmupMs);
  const runs = { one: [] as number[], two: [] as number[] };
  for (let round = 0; round < cfg.rounds; round++) {
    const order = round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const);
    for (const k of order) runs[k].push((await measure(sides[k], cfg.windowMs)).rps);
  }
  // The machine's cores, and those the servers may use: the bench pins every server to one core
  // (and itself to another), so two instances share the one core that one instance had; the
  // database is not pinned. os.availableParallelism() here is this (pinned) process's share.
  const { cores } = machineLoad();
  const pinned = setupPinning().enabled;
  const where = `${cores} cores, os.availableParallelism() ${availableParallelism()} in the bench; instances ${pinned ? 'pinned to 1 core' : 'unpinned'}`;
  log(
    `SendMessage, ${cfg.connections} conns: 1 PostgreSQL instance ${median(runs.one).toFixed(0)} req/s, ` +
      `2 instances ${median(runs.two).toFixed(0)} req/s (${where})`,
  );
  report.add({
    workload: 'SendMessage on 2 PostgreSQL instances',
    metric: `throughput @${cfg.connections} conns spread over both; ${where} (reference column: 1 instance)`,
    unit: 'req/s',
    ours: median(runs.two),
    reference: median(runs.one),
  });
}

async function stream(
  cfg: BenchConfig,
  report: Report,
  log: (s: string) => void,
  servers: Record<Engine, Server>,
): Promise<void> {
  const n = 100;
  const window = async (server: Server, ms: number): Promise<number> => {
    const conns = await Promise.all(Array.from({ length: 4 }, () => RawConnection.open(server.port)));
    let events = 0;
    const t0 = performance.now();
    try {
      await Promise.all(
        conns.map(async (c) => {
          for (let i = 0; i < 200 && performance.now() < t0 + ms; i++) {
            const outcome = await runStream(c, streamRequest(server.port, streamText(n)), n);
            events += outcome.events;
          }
        }),
      );
    } finally {
      for (const c of conns) c.close();
    }
    return (events / (performance.now() - t0)) * 1000;
  };
  for (const e of ENGINES) await window(servers[e], cfg.warmupMs);
  const runs: Record<Engine, number[]> = { SQLite: [], PostgreSQL: [] };
  for (let round = 0; round < cfg.rounds; round++) {
    const order = round % 2 === 0 ? ENGINES : [...ENGINES].reverse();
    for (const e of order) runs[e].push(await window(servers[e], cfg.windowMs));
  }
  const eps = (e: Engine): number => median(runs[e]);
  log(
    `streaming (${n} events): SQLite ${eps('SQLite').toFixed(0)} events/s, PostgreSQL ${eps('PostgreSQL').toFixed(0)}`,
  );
  report.add({
    workload: `streaming ${n} events on PostgreSQL`,
    metric: 'events/s @4 streams (reference column: SQLite)',
    unit: 'events/s',
    ours: eps('PostgreSQL'),
    reference: eps('SQLite'),
  });
}

/** Arrival times (ms, this process's clock) of a stream's events by SSE id. */
async function arrivals(
  port: number,
  method: string,
  params: unknown,
  onFirst?: (task: string) => void,
): Promise<Map<number, number>> {
  const at = new Map<number, number>();
  const res = await fetch(`http://127.0.0.1:${port}/a2a`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${BENCH_TOKEN}`,
      'a2a-version': '1.0',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  if (!res.body) throw new Error(`bench: ${method} answered without a body`);
  // Events are yielded as their chunk is read: the time taken is the arrival time.
  for await (const ev of readSse(res.body)) {
    const now = performance.now();
    const id = Number(ev.id ?? NaN);
    if (!Number.isNaN(id) && !at.has(id)) at.set(id, now);
    if (onFirst && at.size === 1) {
      const data = JSON.parse(ev.data) as { result?: { task?: { id?: string } } };
      if (data.result?.task?.id) onFirst(data.result.task.id);
    }
  }
  return at;
}

async function crossInstance(
  cfg: BenchConfig,
  report: Report,
  log: (s: string) => void,
  a: Server,
  b: Server,
): Promise<void> {
  const delays: number[] = [];
  const tasks = cfg.quick ? 4 : 10;
  const chunks = 40;
  for (let t = 0; t < tasks; t++) {
    let subscribed: Promise<Map<number, number>> | undefined;
    const started = new Promise<void>((resolve) => {
      const onA = arrivals(
        a.port,
        'SendStreamingMessage',
        {
          message: {
            messageId: `paced-${t}-${Date.now()}`,
            role: 'ROLE_USER',
            parts: [{ text: `paced:${chunks}:10` }],
          },
        },
        (taskId) => {
          subscribed = arrivals(b.port, 'SubscribeToTask', { id: taskId });
          resolve();
        },
      );
      void onA.then((m) => (fromA = m));
    });
    let fromA: Map<number, number> | undefined;
    await started;
    const fromB = await subscribed!;
    while (!fromA) await new Promise((r) => setTimeout(r, 5));
    // Events both saw live (B's first event is its snapshot): B's arrival minus A's.
    const first = Math.min(...fromB.keys());
    for (const [id, tb] of fromB) {
      const ta = fromA.get(id);
      if (id > first && ta !== undefined) delays.push(tb - ta);
    }
  }
  delays.sort((x, y) => x - y);
  const p50 = percentile(delays, 0.5);
  const p99 = percentile(delays, 0.99);
  log(`cross-instance delay over ${delays.length} events: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
  report.add({
    workload: 'cross-instance event delay (PostgreSQL, A stores → client of B)',
    metric: 'p50',
    unit: 'ms',
    ours: p50,
  });
  report.add({
    workload: 'cross-instance event delay (PostgreSQL, A stores → client of B)',
    metric: 'p99',
    unit: 'ms',
    ours: p99,
  });
}

/**
 * Authentication's cost: GetTask and SendMessage with an API key and with a JWT (verified against
 * a local fake issuer's JWKS), against the single shared token of before (same app, same storage,
 * only the authenticator differs), measured in the same run in alternating rounds. Target: within
 * 10% of the single token's throughput.
 */
import { checkGetResult, checkSendResult, getTaskRequest, rpcBody, sendMessageRequest } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { runLoad, type LoadResult } from '../lib/load.ts';
import type { Server } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { startOursSingleToken, startOursWithOidc, tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';
import { BENCH_TOKEN } from '../servers/workload.ts';
import { startFakeOidc } from '../../test/support/fake-oidc.ts';

type Who = 'single token' | 'API key' | 'JWT';
const WHO: Who[] = ['single token', 'API key', 'JWT'];
const AUDIENCE = 'cleveragents-bench';

async function rpc(port: number, token: string, method: string, params: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${port}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'a2a-version': '1.0' },
    body: rpcBody(method, params),
  });
  const body = (await res.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (!body.result) throw new Error(`bench: ${method} failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** The first string in a value that looks like one of our API keys. */
function findKey(v: unknown): string | undefined {
  if (typeof v === 'string') return /^ca_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/.test(v) ? v : undefined;
  if (v && typeof v === 'object')
    return Object.values(v)
      .map(findKey)
      .find((x) => x !== undefined);
  return undefined;
}

export async function authWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const oidc = await startFakeOidc();
  const servers: Partial<Record<'single' | 'ours', Server>> = {};
  try {
    servers.single = await startOursSingleToken(tempDir('auth-single'));
    servers.ours = await startOursWithOidc(tempDir('auth-ours'), oidc.issuer, AUDIENCE);
    const ours = servers.ours;
    const added = await rpc(ours.port, BENCH_TOKEN, '_cleveragents/user/add', { name: 'bench' });
    const key = findKey(added);
    if (!key) throw new Error(`bench: user/add returned no key: ${JSON.stringify(added)}`);
    const jwt = await oidc.issue(
      { sub: 'bench-jwt', preferred_username: 'bench-jwt' },
      { audience: AUDIENCE, expiresIn: 3600 },
    );
    const target: Record<Who, { server: Server; token: string }> = {
      'single token': { server: servers.single, token: BENCH_TOKEN },
      'API key': { server: ours, token: key },
      JWT: { server: ours, token: jwt },
    };
    // Each credential keeps the tasks it made (they live in its user's namespace).
    const ids: Record<Who, string[]> = { 'single token': [], 'API key': [], JWT: [] };
    const measure = async (who: Who, kind: 'send' | 'get', ms: number): Promise<LoadResult> => {
      const { server, token } = target[who];
      const pool = ids[who];
      return runLoad({
        port: server.port,
        connections: cfg.connections,
        maxRequests: cfg.maxRequests,
        maxMs: ms,
        request: (i) =>
          kind === 'send'
            ? sendMessageRequest(server.port, undefined, {}, token)
            : getTaskRequest(server.port, pool[i % pool.length] as string, token),
        validate: (res, i) => {
          if (kind === 'get') return checkGetResult(res, pool[i % pool.length] as string);
          const id = checkSendResult(res);
          if (pool.length < 5_000) pool.push(id);
        },
      });
    };
    for (const kind of ['send', 'get'] as const) for (const w of WHO) await measure(w, kind, cfg.warmupMs);
    for (const kind of ['send', 'get'] as const) {
      const runs: Record<Who, LoadResult[]> = { 'single token': [], 'API key': [], JWT: [] };
      for (let round = 0; round < cfg.rounds; round++) {
        const order = WHO.map((_, i) => WHO[(i + round) % WHO.length] as Who);
        for (const w of order) runs[w].push(await measure(w, kind, cfg.windowMs));
      }
      const name = kind === 'send' ? 'SendMessage' : 'GetTask';
      const rps = (w: Who): number => median(runs[w].map((r) => r.rps));
      const p50 = (w: Who): number => median(runs[w].map((r) => r.p50Ms));
      log(`${name} auth: ${WHO.map((w) => `${w} ${rps(w).toFixed(0)} req/s`).join(', ')}`);
      for (const w of ['API key', 'JWT'] as const) {
        report.add({
          workload: `${name}, ${w}`,
          metric: `throughput @${cfg.connections} conns (reference column: the single shared token)`,
          unit: 'req/s',
          ours: rps(w),
          reference: rps('single token'),
        });
        report.add({
          workload: `${name}, ${w}`,
          metric: `latency p50 @${cfg.connections} conns (reference column: the single shared token)`,
          unit: 'ms',
          ours: p50(w),
          reference: p50('single token'),
        });
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s?.stop()));
    await oidc.close();
  }
}

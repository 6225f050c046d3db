/**
 * Workload 4: the stdio transport. Round trips per second of GetTask (a task-sized reply) with 1
 * and 32 requests in flight, against a bare newline-delimited JSON echo child that answers every
 * line with the same task.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { agentEnv } from '../../src/protocol/client/agent-env.ts';
import { BenchError, checkEchoTask } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import { pool } from '../lib/load.ts';
import { cpuMs, setupPinning, stopProcess } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { BIN, stdioEchoScript, tempDir } from '../lib/servers.ts';
import { median } from '../lib/stats.ts';
import { SEND_TEXT } from '../servers/workload.ts';

interface Reply {
  result?: Record<string, unknown>;
  error?: unknown;
}

/** A newline-delimited JSON-RPC peer over a child's pipes. */
class NdjsonPeer {
  private nextId = 1;
  private readonly waiting = new Map<number, (r: Reply) => void>();
  private rest = '';

  readonly child: ChildProcess;

  constructor(child: ChildProcess) {
    this.child = child;
    child.stdout?.on('data', (c: Buffer) => {
      const text = this.rest + c.toString('utf8');
      let start = 0;
      for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
        const msg = JSON.parse(text.slice(start, nl)) as Reply & { id?: number };
        start = nl + 1;
        if (typeof msg.id === 'number') {
          const w = this.waiting.get(msg.id);
          this.waiting.delete(msg.id);
          w?.(msg);
        }
      }
      this.rest = text.slice(start);
    });
  }

  call(method: string, params: unknown): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string, params: unknown): void {
    this.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }
}

/** Our agent and the echo child alike start in the environment the CLI gives a local agent. */
function spawnPinned(args: string[]): ChildProcess {
  const p = setupPinning();
  const env = agentEnv(process.env);
  return p.enabled
    ? spawn('taskset', ['-c', String(p.serverCore), process.execPath, ...args], {
        stdio: ['pipe', 'pipe', 'ignore'],
        env,
      })
    : spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env });
}

async function roundTrips(
  peer: NdjsonPeer,
  ids: string[],
  inFlight: number,
  ms: number,
): Promise<{ rps: number; cpuPerCallUs: number }> {
  let done = 0;
  const deadline = performance.now() + ms;
  const c0 = cpuMs(peer.child.pid as number);
  const t0 = performance.now();
  const slots = Array.from({ length: inFlight }, (_, i) => i);
  await pool(slots, inFlight, async (slot) => {
    let i = slot;
    while (performance.now() < deadline && done < 1_000_000) {
      const id = ids[i++ % ids.length] as string;
      const r = await peer.call('GetTask', { id });
      if (!r.result) throw new BenchError(`stdio GetTask: ${JSON.stringify(r).slice(0, 300)}`);
      if (r.result['id'] !== id) throw new BenchError(`stdio GetTask: asked for ${id}, got ${String(r.result['id'])}`);
      checkEchoTask(r.result, SEND_TEXT, 'stdio GetTask');
      done++;
    }
  });
  const elapsed = performance.now() - t0;
  return { rps: (done / elapsed) * 1000, cpuPerCallUs: ((cpuMs(peer.child.pid as number) - c0) * 1000) / done };
}

export async function stdioWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const ours = new NdjsonPeer(spawnPinned([BIN, 'serve', '--stdio', '--data-dir', tempDir('stdio')]));
  const echo = new NdjsonPeer(spawnPinned([stdioEchoScript()]));
  try {
    const init = await ours.call('initialize', { protocolVersion: '1.0', clientInfo: { name: 'bench' } });
    if (!init.result) throw new BenchError(`stdio initialize failed: ${JSON.stringify(init)}`);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await ours.call('SendMessage', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: SEND_TEXT }] },
      });
      ids.push(checkEchoTask(r.result?.['task'] ?? {}, SEND_TEXT, 'stdio SendMessage'));
    }
    // The echo answers with one of our tasks, so both reply with the same bytes per call.
    const sample = await ours.call('GetTask', { id: ids[0] });
    echo.notify('set', sample.result);
    const echoIds = ids.map(() => ids[0] as string);

    for (const inFlight of [1, 32]) {
      await roundTrips(ours, ids, inFlight, cfg.warmupMs / 2);
      await roundTrips(echo, echoIds, inFlight, cfg.warmupMs / 2);
      const o: number[] = [];
      const e: number[] = [];
      const oc: number[] = [];
      const ec: number[] = [];
      for (let round = 0; round < cfg.rounds; round++) {
        const a = round % 2 === 0;
        const first = await roundTrips(a ? ours : echo, a ? ids : echoIds, inFlight, cfg.windowMs);
        const second = await roundTrips(a ? echo : ours, a ? echoIds : ids, inFlight, cfg.windowMs);
        const [ro, re] = a ? [first, second] : [second, first];
        o.push(ro.rps);
        e.push(re.rps);
        oc.push(ro.cpuPerCallUs);
        ec.push(re.cpuPerCallUs);
      }
      const ours50 = median(o);
      const echo50 = median(e);
      log(`stdio ${inFlight} in flight: ours ${ours50.toFixed(0)}/s, echo ${echo50.toFixed(0)}/s`);
      report.add({
        workload: `stdio GetTask, ${inFlight} in flight`,
        metric: 'round trips/s',
        unit: '',
        ours: ours50,
        floor: echo50,
      });
      report.add({
        workload: `stdio GetTask, ${inFlight} in flight`,
        metric: 'child CPU / call',
        unit: 'µs',
        ours: median(oc),
        floor: median(ec),
      });
    }
  } finally {
    ours.child.stdin?.end();
    echo.child.stdin?.end();
    await Promise.all([stopProcess(ours.child), stopProcess(echo.child)]);
  }
}

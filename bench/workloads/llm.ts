/**
 * Workload 8: chat with an LLM actor, the provider being the fake OpenAI-compatible server of the
 * tests in a child process (bench/lib/fake-llm-server.ts). An actor pointing at it is registered in
 * the agent's data dir through the A2A client, with `builtin/read-file` on a project of one
 * fs-directory; every turn runs in a new session bound to that project.
 *
 * 1. Added latency per streamed chunk: the fake streams n chunks `gap` ms apart, each carrying the
 *    moment it was written; the client notes when each `response` artifact chunk reaches it, over
 *    HTTP SSE (`agents serve`) and stdio (`agents serve --stdio`). Floor: the same stream read
 *    straight from the fake by the bench (fetch + the same SSE reader our client uses).
 * 2. Server CPU per chunk: the agent's utime+stime over the turn ÷ n; the floor client's own CPU.
 * 3. A tool loop: the fake asks for `builtin__read-file` `steps` times, then answers. Floor: the
 *    same model requests (the bodies the agent sent, replayed) made straight to the fake one after
 *    another, each read to its end. Per-step overhead = (ours − floor) ÷ steps.
 *
 * The agents run on the server core, the fake and the bench on the client core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../lib/a2a.ts';
import type { BenchConfig } from '../lib/config.ts';
import {
  SENT_PATTERN,
  streamPrompt,
  TOOLS_DONE,
  toolsPrompt,
  type FromFake,
  type ToFake,
} from '../lib/fake-llm-server.ts';
import { cpuMs, keptStderr, setupPinning, stopProcess } from '../lib/proc.ts';
import type { Report } from '../lib/report.ts';
import { benchScript, BIN, startOurs, tempDir } from '../lib/servers.ts';
import { median, percentile } from '../lib/stats.ts';
import { BENCH_TOKEN } from '../servers/workload.ts';
import {
  A2AClient,
  REGISTRIES,
  sendStreamingMessage,
  sessionCreate,
  type StdioClientTransport,
  type StreamResponse,
} from '../../src/protocol/client/index.ts';
import { readSse } from '../../src/protocol/client/sse.ts';
import { GptTokenCounter } from '../../src/infrastructure/llm/token-counter.ts';

const ACTOR = 'local/bench-llm';
const PROJECT = 'local/bench-llm-files';
const RESOURCE = 'local/bench-llm-files';
const FILE = 'notes.txt';
/** Safety net for one turn (a turn normally takes a few seconds). */
const TURN_LIMIT_MS = 120_000;

type Who = 'http' | 'stdio' | 'floor';
const WHO: Who[] = ['http', 'stdio', 'floor'];
const LABEL: Record<Who, string> = { http: 'HTTP SSE', stdio: 'stdio', floor: 'floor' };

interface Agent {
  who: Exclude<Who, 'floor'>;
  client: A2AClient;
  pid: number;
  stop(): Promise<void>;
}

interface Fake {
  url: string;
  child: ChildProcess;
  /** The generation request bodies since the last take. */
  take(): Promise<string[]>;
  stop(): Promise<void>;
}

const now = (): number => performance.timeOrigin + performance.now();

function pinned(core: number): (args: string[]) => [string, string[]] {
  const p = setupPinning();
  return (args) =>
    p.enabled ? ['taskset', ['-c', String(core), process.execPath, ...args]] : [process.execPath, args];
}

async function startFake(): Promise<Fake> {
  const [cmd, args] = pinned(setupPinning().clientCore)([benchScript('lib/fake-llm-server')]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let err = '';
  child.stderr?.on('data', (c: Buffer) => void (err = (err + c.toString('utf8')).slice(-4000)));
  const waiters: Array<(m: FromFake) => void> = [];
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new BenchError(`the fake LLM did not start within 30 s: ${err}`));
    }, 30_000);
    child.on('message', (m: FromFake) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m.url);
      } else waiters.shift()?.(m);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new BenchError(`the fake LLM exited (${code}): ${err}`));
    });
  });
  return {
    url,
    child,
    take: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new BenchError('the fake LLM did not answer take')), 30_000);
        waiters.push((m) => {
          clearTimeout(timer);
          resolve(m.type === 'bodies' ? m.bodies : []);
        });
        child.send({ type: 'take' } satisfies ToFake);
      }),
    stop: async () => {
      if (child.connected) child.disconnect();
      await stopProcess(child);
    },
  };
}

const agentEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env['CLEVERAGENTS_VALIDATE_RESULTS'];
  return env;
};

async function startHttpAgent(dataDir: string): Promise<Agent> {
  const server = await startOurs(dataDir);
  return {
    who: 'http',
    client: A2AClient.remote({ url: `http://127.0.0.1:${server.port}`, token: BENCH_TOKEN }),
    pid: server.pid,
    stop: () => server.stop(),
  };
}

const stdioLog = keptStderr('the stdio agent');

async function startStdioAgent(dataDir: string): Promise<Agent> {
  const [command, args] = pinned(setupPinning().serverCore)([BIN, 'serve', '--stdio', '--data-dir', dataDir]);
  const client = await A2AClient.local({
    command,
    args,
    env: agentEnv(),
    clientInfo: { name: 'bench' },
    ...stdioLog.options,
  });
  // taskset execs the program, so the pid is the agent's own.
  const pid = (client.transport as StdioClientTransport).pid;
  if (pid === undefined) throw new BenchError('stdio agent without a pid');
  return { who: 'stdio', client, pid, stop: () => client.close() };
}

/** The project (one fs-directory) and the actor pointing at the fake, in the agent's registry. */
async function register(agent: Agent, fakeUrl: string, filesDir: string): Promise<void> {
  const c = agent.client;
  await c.call(REGISTRIES.resource.add, { definition: { name: RESOURCE, type: 'fs-directory', path: filesDir } });
  await c.call(REGISTRIES.project.add, { definition: { name: PROJECT, resources: [RESOURCE] } });
  await c.call(REGISTRIES.actor.add, {
    definition: {
      name: ACTOR,
      description: 'The bench actor, talking to the fake OpenAI-compatible server',
      provider: 'openai-compatible',
      baseUrl: fakeUrl,
      model: 'fake-model',
      contextWindow: 200_000,
      maxToolSteps: 200,
      tools: ['builtin/read-file'],
    },
  });
}

/** One streamed turn in a new session; `onEvent` sees each event as it arrives. Returns the final state. */
async function turn(
  agent: Agent,
  prompt: string,
  onEvent: (ev: StreamResponse, at: number) => void,
  where: { project: string; context?: 'map' | 'full' } = { project: PROJECT },
): Promise<string> {
  const session = await agent.client.call(sessionCreate, { actor: ACTOR, ...where });
  const message = {
    messageId: randomUUID(),
    role: 'ROLE_USER' as const,
    parts: [{ text: prompt }],
    contextId: session.id,
  };
  let state = '';
  const signal = AbortSignal.timeout(TURN_LIMIT_MS);
  for await (const { event } of agent.client.stream(sendStreamingMessage, { message }, { signal })) {
    const at = now();
    onEvent(event, at);
    if ('task' in event) state = event.task.status.state;
    else if ('statusUpdate' in event) state = event.statusUpdate.status.state;
  }
  return state;
}

interface StreamRun {
  /** Per-chunk latencies (ms), ascending. */
  latencies: number[];
  /** CPU per chunk of the agent (ours) or of the client (floor), µs. */
  cpuPerChunkUs: number;
}

function stampsOf(text: string, at: number, into: number[]): void {
  for (const m of text.matchAll(SENT_PATTERN)) into.push(at - Number(m[1]));
}

async function streamOurs(agent: Agent, n: number, gapMs: number): Promise<StreamRun> {
  const latencies: number[] = [];
  const c0 = cpuMs(agent.pid);
  const state = await turn(agent, streamPrompt(n, gapMs), (ev, at) => {
    if (!('artifactUpdate' in ev) || ev.artifactUpdate.artifact.artifactId !== 'response') return;
    for (const p of ev.artifactUpdate.artifact.parts) if (p.text) stampsOf(p.text, at, latencies);
  });
  const cpu = cpuMs(agent.pid) - c0;
  if (state !== 'TASK_STATE_COMPLETED') throw new BenchError(`llm stream over ${agent.who}: the turn ended ${state}`);
  if (latencies.length !== n)
    throw new BenchError(`llm stream over ${agent.who}: ${latencies.length} chunks arrived, expected ${n}`);
  return { latencies: latencies.sort((a, b) => a - b), cpuPerChunkUs: (cpu * 1000) / n };
}

/** POSTs one chat-completions body to the fake and reads the SSE stream to its end. */
async function straight(url: string, body: string, onData: (json: Record<string, unknown>, at: number) => void) {
  const res = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(TURN_LIMIT_MS),
  });
  if (res.status !== 200 || !res.body) throw new BenchError(`llm floor: the fake answered HTTP ${res.status}`);
  for await (const ev of readSse(res.body)) {
    const at = now();
    if (ev.data === '[DONE]') continue;
    onData(JSON.parse(ev.data) as Record<string, unknown>, at);
  }
}

async function streamFloor(url: string, n: number, gapMs: number): Promise<StreamRun> {
  const latencies: number[] = [];
  const body = JSON.stringify({
    model: 'fake-model',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: streamPrompt(n, gapMs) }],
  });
  const c0 = process.cpuUsage();
  await straight(url, body, (json, at) => {
    const choice = (json['choices'] as Array<{ delta?: { content?: unknown } }> | undefined)?.[0];
    if (typeof choice?.delta?.content === 'string') stampsOf(choice.delta.content, at, latencies);
  });
  const c = process.cpuUsage(c0);
  if (latencies.length !== n) throw new BenchError(`llm stream floor: ${latencies.length} chunks, expected ${n}`);
  return { latencies: latencies.sort((a, b) => a - b), cpuPerChunkUs: (c.user + c.system) / n };
}

/** The whole tool-loop turn (ms), checked: `steps` read-file calls done, then the final answer. */
async function toolsOurs(agent: Agent, steps: number): Promise<number> {
  let done = 0;
  let answer = '';
  const t0 = performance.now();
  const state = await turn(agent, toolsPrompt(steps, FILE), (ev) => {
    if (!('artifactUpdate' in ev)) return;
    const a = ev.artifactUpdate.artifact;
    if (a.artifactId === 'response') answer += a.parts.map((p) => p.text ?? '').join('');
    else if (a.name === 'tool-call' && (a.parts[0]?.data as { state?: unknown } | undefined)?.state === 'done') done++;
  });
  const ms = performance.now() - t0;
  if (state !== 'TASK_STATE_COMPLETED') throw new BenchError(`llm tools over ${agent.who}: the turn ended ${state}`);
  if (done !== steps) throw new BenchError(`llm tools over ${agent.who}: ${done} tool calls done, expected ${steps}`);
  if (!answer.includes(TOOLS_DONE)) throw new BenchError(`llm tools over ${agent.who}: no final answer`);
  return ms;
}

async function toolsFloor(url: string, bodies: string[]): Promise<number> {
  let events = 0;
  const t0 = performance.now();
  for (const body of bodies) await straight(url, body, () => void events++);
  const ms = performance.now() - t0;
  if (events < bodies.length * 2) throw new BenchError(`llm tools floor: only ${events} events`);
  return ms;
}

const BIG = 'local/bench-llm-400';
const BIG_FILES = 400;

/** A source file of the 400-file project: six exported functions with bodies (~1.5 KB). */
function bigModule(i: number): string {
  const fns = Array.from(
    { length: 6 },
    (_, k) =>
      `export function step${i}x${k}(input: number): number {\n  const doubled = input * ${k + 2};\n  // keeps the value in range for module ${i}\n  return doubled > ${i * 10} ? doubled - ${i} : doubled + ${k};\n}\n`,
  );
  return `/** Module ${i} of the generated project. */\n${fns.join('\n')}`;
}

/** The tokens of the request a "hello" turn sends (system, tools, message), as o200k counts them. */
async function helloSizes(agent: Agent, fake: Fake, report: Report, log: (s: string) => void): Promise<void> {
  const dir = tempDir('llm-400');
  try {
    writeFileSync(join(dir, 'AGENTS.md'), 'Run the tests with npm test.\n');
    for (let i = 0; i < BIG_FILES; i++) {
      mkdirSync(join(dir, 'src', `area${i % 20}`), { recursive: true });
      writeFileSync(join(dir, 'src', `area${i % 20}`, `mod${i}.ts`), bigModule(i));
    }
    const c = agent.client;
    await c.call(REGISTRIES.resource.add, { definition: { name: BIG, type: 'fs-directory', path: dir } });
    await c.call(REGISTRIES.project.add, { definition: { name: BIG, resources: [BIG] } });
    const tokens = new GptTokenCounter();
    const sizes: Record<'map' | 'full', number> = { map: 0, full: 0 };
    for (const context of ['map', 'full'] as const) {
      await fake.take();
      const state = await turn(agent, 'hello', () => undefined, { project: BIG, context });
      if (state !== 'TASK_STATE_COMPLETED') throw new BenchError(`llm hello (${context}): the turn ended ${state}`);
      const [body] = await fake.take();
      if (!body) throw new BenchError(`llm hello (${context}): no model request`);
      sizes[context] = await tokens.count(body);
    }
    log(`llm hello on ${BIG_FILES} files: ${sizes.map} tokens with the map, ${sizes.full} with --context full`);
    const workload = `LLM chat context, "hello" on a ${BIG_FILES}-file project`;
    report.add({ workload, metric: 'request tokens, repository map (default)', unit: 'tokens', ours: sizes.map });
    report.add({ workload, metric: 'request tokens, --context full', unit: 'tokens', ours: sizes.full });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rotate = (round: number): Who[] => WHO.map((_, i) => WHO[(i + round) % WHO.length] as Who);

export async function llmWorkload(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const n = cfg.llmChunks;
  const gap = cfg.llmGapMs;
  const steps = cfg.llmToolSteps;
  const dirs = [tempDir('llm-files'), tempDir('llm-http'), tempDir('llm-stdio')];
  const [filesDir, httpDir, stdioDir] = dirs as [string, string, string];
  writeFileSync(join(filesDir, FILE), 'A small file of the bench project.\nIt has two lines.\n');
  let fake: Fake | undefined;
  const agents: Partial<Record<'http' | 'stdio', Agent>> = {};
  try {
    fake = await startFake();
    agents.http = await startHttpAgent(httpDir);
    agents.stdio = await startStdioAgent(stdioDir);
    const both = [agents.http, agents.stdio];
    for (const a of both) await register(a, fake.url, filesDir);

    // Warm-up: the first turn loads the provider SDK; the tool turn gives the floor its bodies.
    for (const a of both) await streamOurs(a, Math.min(n, 200), gap);
    await streamFloor(fake.url, Math.min(n, 200), gap);
    await fake.take();
    await toolsOurs(agents.http, steps);
    const bodies = await fake.take();
    if (bodies.length !== steps + 1)
      throw new BenchError(`llm tools: the agent made ${bodies.length} model requests, expected ${steps + 1}`);
    await toolsOurs(agents.stdio, steps);
    await toolsFloor(fake.url, bodies);

    // 1 and 2: latency per chunk, CPU per chunk.
    const runs: Record<Who, StreamRun[]> = { http: [], stdio: [], floor: [] };
    const f = fake;
    const streamOf = (w: Who): Promise<StreamRun> =>
      w === 'floor' ? streamFloor(f.url, n, gap) : streamOurs(agents[w] as Agent, n, gap);
    for (let round = 0; round < cfg.rounds; round++) for (const w of rotate(round)) runs[w].push(await streamOf(w));
    const p = (w: Who, q: number): number => median(runs[w].map((r) => percentile(r.latencies, q)));
    const added = (w: 'http' | 'stdio', q: number): number =>
      median(runs[w].map((r, i) => percentile(r.latencies, q) - percentile((runs.floor[i] as StreamRun).latencies, q)));
    const cpu = (w: Who): number => median(runs[w].map((r) => r.cpuPerChunkUs));
    const workload = `LLM stream, ${n} chunks ${gap} ms apart`;
    for (const w of ['http', 'stdio'] as const) {
      const a50 = added(w, 0.5);
      const a99 = added(w, 0.99);
      log(
        `llm stream ${LABEL[w]}: p50 ${p(w, 0.5).toFixed(3)} ms (floor ${p('floor', 0.5).toFixed(3)}), ` +
          `p99 ${p(w, 0.99).toFixed(3)} ms (floor ${p('floor', 0.99).toFixed(3)}), added p50 ${a50.toFixed(3)} ms, ` +
          `p99 ${a99.toFixed(3)} ms; server CPU ${cpu(w).toFixed(0)} µs/chunk (floor client ${cpu('floor').toFixed(0)})`,
      );
      report.add({
        workload,
        metric: `chunk latency p50, ${LABEL[w]}`,
        unit: 'ms',
        ours: p(w, 0.5),
        floor: p('floor', 0.5),
      });
      report.add({
        workload,
        metric: `chunk latency p99, ${LABEL[w]}`,
        unit: 'ms',
        ours: p(w, 0.99),
        floor: p('floor', 0.99),
      });
      report.add({
        workload,
        metric: `added latency p50 (ours − floor), ${LABEL[w]}`,
        unit: 'ms',
        ours: a50,
      });
      report.add({ workload, metric: `added latency p99 (ours − floor), ${LABEL[w]}`, unit: 'ms', ours: a99 });
      report.add({
        workload,
        metric: `server CPU / chunk, ${LABEL[w]} (floor: the client's)`,
        unit: 'µs',
        ours: cpu(w),
        floor: cpu('floor'),
      });
    }

    // 3: the tool loop.
    const loops: Record<Who, number[]> = { http: [], stdio: [], floor: [] };
    const loopOf = (w: Who): Promise<number> =>
      w === 'floor' ? toolsFloor(f.url, bodies) : toolsOurs(agents[w] as Agent, steps);
    for (let round = 0; round < cfg.rounds; round++) for (const w of rotate(round)) loops[w].push(await loopOf(w));
    await fake.take(); // forget the bodies of the timed turns
    const tw = 'LLM tool loop (read-file steps)';
    for (const w of ['http', 'stdio'] as const) {
      const perStep = median(loops[w].map((ms, i) => (ms - (loops.floor[i] as number)) / steps));
      log(
        `llm tools ${LABEL[w]}: turn ${median(loops[w]).toFixed(0)} ms, floor ${median(loops.floor).toFixed(0)} ms, ` +
          `per-step overhead ${perStep.toFixed(2)} ms`,
      );
      report.add({
        workload: tw,
        metric: `turn wall time, ${LABEL[w]}`,
        unit: 'ms',
        ours: median(loops[w]),
        floor: median(loops.floor),
      });
      report.add({
        workload: tw,
        metric: `per-step overhead (ours − floor) ÷ ${steps}, ${LABEL[w]}`,
        unit: 'ms',
        ours: perStep,
      });
    }

    // 4: what a "hello" turn sends on a project of 400 files: the map (default), and the whole view.
    await helloSizes(agents.http, fake, report, log);
  } catch (err) {
    throw stdioLog.explain(err);
  } finally {
    await Promise.all([...Object.values(agents).map((a) => a.stop()), fake?.stop()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

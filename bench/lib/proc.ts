/**
 * Server processes for the bench: started pinned to the server core with `taskset` (when the
 * machine has it and more than one core), their CPU time and RSS read from /proc, stopped by pid.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export interface Pinning {
  /** Whether taskset works here (and there are at least two cores). */
  enabled: boolean;
  serverCore: number;
  clientCore: number;
  note: string;
}

let pinning: Pinning | undefined;

/** Decides the pinning once: server on core 0, load generator (this process) on core 1. */
export function setupPinning(): Pinning {
  if (pinning) return pinning;
  const n = cpus().length;
  if (n < 2) {
    pinning = { enabled: false, serverCore: 0, clientCore: 0, note: `one core: server and load generator share it` };
    return pinning;
  }
  const probe = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    pinning = {
      enabled: false,
      serverCore: 0,
      clientCore: 1,
      note: 'taskset unavailable: processes float over the cores',
    };
    return pinning;
  }
  const self = spawnSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' });
  pinning = {
    enabled: true,
    serverCore: 0,
    clientCore: 1,
    note:
      self.status === 0
        ? 'servers on core 0, load generator on core 1 (taskset)'
        : 'servers on core 0 (taskset); could not pin the load generator',
  };
  return pinning;
}

export interface Server {
  name: string;
  child: ChildProcess;
  pid: number;
  port: number;
  stderr(): string;
  stop(): Promise<void>;
}

export interface StartSpec {
  name: string;
  /** node arguments (script and its arguments). */
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** How the server tells us its port: a line on stdout or stderr matching this (group 1 = port). */
  portPattern: RegExp;
  timeoutMs?: number;
}

/** Servers that exited without being stopped: each one's name, exit and last lines of stderr. */
const deaths: string[] = [];

/** What `deaths` holds, emptied: printed under a workload that failed, to say which side died and why. */
export function takeDeaths(): string[] {
  return deaths.splice(0);
}

/** Starts a node server pinned to the server core; resolves once it has printed its port. */
export function startServer(spec: StartSpec): Promise<Server> {
  const p = setupPinning();
  const [cmd, args] = p.enabled
    ? ['taskset', ['-c', String(p.serverCore), process.execPath, ...spec.args]]
    : [process.execPath, spec.args];
  const child = spawn(cmd, args, {
    env: spec.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${spec.name} did not start within ${spec.timeoutMs ?? 30_000} ms:\n${err.slice(-2000)}`));
    }, spec.timeoutMs ?? 30_000);
    let listening = false;
    // Called on every piece of output, so it acts on the first line that names the port only.
    const look = (): void => {
      if (listening) return;
      const m = spec.portPattern.exec(out) ?? spec.portPattern.exec(err);
      if (!m) return;
      listening = true;
      clearTimeout(timer);
      let stopping = false;
      const server: Server = {
        name: spec.name,
        child,
        // taskset execs the program, so the pid is the server's own.
        pid: child.pid as number,
        port: Number(m[1]),
        stderr: () => err,
        stop: () => {
          stopping = true;
          return stopProcess(child);
        },
      };
      child.once('exit', (code, signal) => {
        if (!stopping)
          deaths.push(`${spec.name} exited (${signal ?? `code ${code}`}); its last lines:\n${lastLines(err, 25)}`);
      });
      resolve(server);
    };
    child.stdout?.on('data', (c: Buffer) => {
      if (out.length < 65536) out += c.toString('utf8');
      look();
    });
    child.stderr?.on('data', (c: Buffer) => {
      err = (err + c.toString('utf8')).slice(-65536);
      look();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${spec.name} exited with ${code} before it listened:\n${err.slice(-2000)}`));
    });
  });
}

const lastLines = (text: string, n: number): string =>
  text
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((l) => `    ${l}`)
    .join('\n');

/** SIGTERM, then SIGKILL after a grace period; resolves when the process has exited. */
export function stopProcess(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

/** User + system CPU time of a process, in ms (from /proc/<pid>/stat). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of a process, in MB (from /proc/<pid>/status). */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The 1-minute load average and core count, for the report header. */
export function machineLoad(): { cores: number; load1: number; model: string } {
  const c = cpus();
  let load1 = Number.NaN;
  try {
    load1 = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    // not Linux
  }
  return { cores: c.length, load1, model: c[0]?.model ?? 'unknown' };
}

/**
 * For an agent the A2A client spawns (`A2AClient.local`): options that keep its last lines of
 * stderr, and `explain`, which adds them to an error that ended the workload — the client's own
 * message keeps five lines, and a native crash prints its cause above its stack.
 */
export function keptStderr(name: string): {
  options: { stderr: 'capture'; onStderr(line: string): void };
  explain(err: unknown): unknown;
} {
  const lines: string[] = [];
  return {
    options: {
      stderr: 'capture',
      onStderr: (line) => {
        lines.push(line);
        if (lines.length > 50) lines.splice(0, lines.length - 25);
      },
    },
    explain: (err) =>
      err instanceof Error && /agent process exited/.test(err.message)
        ? new Error(`${err.message}\n${name}'s last lines:\n${lastLines(lines.join('\n'), 25)}`, { cause: err })
        : err,
  };
}

/**
 * Start-up marks for `npm run bench` (bench/workloads/cli.ts): with CLEVERAGENTS_STARTUP_MARKS set
 * to a file, each process of a command appends `pid<TAB>mark<TAB>ms<TAB>process start ms<TAB>cpu ms`
 * lines to it (wall-clock epoch milliseconds, comparable across processes; the process's CPU time
 * so far, user + system, since wall time alone hides a busy shared machine), so that the
 * bench can say where a command's milliseconds go (the CLI's own start, its commands, the agent's
 * start, the request). Without the variable a mark costs one property read.
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export const STARTUP_MARKS_ENV = 'CLEVERAGENTS_STARTUP_MARKS';

/** Records `name` now, in wall-clock milliseconds comparable across processes. */
export function startupMark(name: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = env[STARTUP_MARKS_ENV];
  if (!file) return;
  try {
    const now = (performance.timeOrigin + performance.now()).toFixed(3);
    const cpu = process.cpuUsage();
    const cpuMs = ((cpu.user + cpu.system) / 1000).toFixed(1);
    appendFileSync(file, `${process.pid}\t${name}\t${now}\t${performance.timeOrigin.toFixed(3)}\t${cpuMs}\n`);
  } catch {
    // A measurement aid: a mark that cannot be written never changes what the command does.
  }
}

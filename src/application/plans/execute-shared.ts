/**
 * What both execute paths share — the declared steps (execute.phase.ts) and a plan from a goal
 * (llm/execute-llm.phase.ts): the sandboxes and their first checkpoint, how commands run, the wall clock,
 * recording a tool call, and the diff artifact the phase ends with.
 */
import { outputTail, type CommandOutput } from '../../domain/plan/command-output.ts';
import type { Plan, ToolCallRecord } from '../../domain/plan/plan.ts';
import { KEPT_OUTPUT_BYTES, type ToolCallResult } from '../ports/sandbox.port.ts';
import { planMeta, type PlanRunPorts, type TaskHandle, totalStats } from './plan.recorder.ts';
import { resourcesOf } from './plan-definitions.ts';
import { addSandbox, moveCursor, noteConfinement, setWallTime } from '../../domain/plan/plan-progress.ts';

/** What making and restoring the sandboxes uses: the recorder and the plan's checkpoints, the registry (its resources), the sandboxes. */
export type SandboxInputs = Pick<PlanRunPorts, 'recorder' | 'plans' | 'registry' | 'sandboxes'>;

/**
 * The plan's sandboxes: created (with a `before-execute` checkpoint) on the first run; on a resumed
 * run (`restore`), reset to the last checkpoint at or before the cursor, which the cursor then takes.
 * True when the sandboxes now hold exactly a checkpoint (one just made, or restored).
 */
export async function prepareSandboxes(
  io: SandboxInputs,
  plan: Plan,
  turn: TaskHandle,
  opts: { restore: boolean },
): Promise<boolean> {
  let atCheckpoint = false;
  if (plan.sandboxes.length === 0) {
    for (const r of await resourcesOf(io.registry, plan)) {
      const sb = await io.sandboxes.create(plan.id, r);
      addSandbox(plan, sb);
      await turn.status(
        'TASK_STATE_WORKING',
        await io.recorder.shownText(
          plan,
          `Sandbox for ${r.name}: ${sb.root}${sb.branch ? ` (branch ${sb.branch})` : ''}`,
        ),
        planMeta(plan),
      );
    }
    const cp = await io.recorder.checkpoint(plan, 'before-execute', 0);
    atCheckpoint = true;
    await turn.status(
      'TASK_STATE_WORKING',
      `Checkpoint ${cp.id} before execute`,
      planMeta(plan, { checkpoint: cp.id }),
    );
  } else if (opts.restore) {
    const last = (await io.plans.checkpoints(plan.id)).filter((c) => c.stepIndex <= plan.cursor).at(-1);
    if (last) {
      await io.recorder.restore(plan, last);
      atCheckpoint = true;
      moveCursor(plan, last.stepIndex);
      await turn.status(
        'TASK_STATE_WORKING',
        `Restored checkpoint ${last.id} (${last.label})`,
        planMeta(plan, { checkpoint: last.id }),
      );
    }
  }
  await io.recorder.save(plan);
  return atCheckpoint;
}

/**
 * How the plan's commands run: its network, and the variables its action declares. Confinement
 * `none` is recorded on the plan and stays (shown by plan status).
 */
export async function commandSettings(
  io: Pick<PlanRunPorts, 'tools' | 'registry'>,
  plan: Plan,
): Promise<{ network: 'none' | 'allow'; env: Readonly<Record<string, string>> | undefined }> {
  const how = await io.tools.confinement?.();
  noteConfinement(plan, how);
  const action = (await io.registry.lookup('action', plan.action))?.definition;
  return { network: plan.network ?? 'none', env: action?.env };
}

/** Keeps `plan.usage.wallMs` up to date: the time used before this run plus this run's. */
export function wallClock(plan: Plan): () => void {
  const started = Date.now();
  const wall = plan.usage.wallMs;
  return () => {
    setWallTime(plan, wall + (Date.now() - started));
  };
}

/**
 * What a call's record keeps of its output: a command's whole output (as the tool runner kept it,
 * else its `output`), within KEPT_OUTPUT_BYTES — empty when it wrote nothing, which the views say;
 * nothing for a tool that ran no command (a file tool's output is the file, in the sandbox). For
 * every path that records a plan's calls.
 */
export function keptOutput(result: ToolCallResult): CommandOutput | undefined {
  const ranCommand =
    result.commandOutput !== undefined || result.exitCode !== undefined || result.confinement !== undefined;
  if (!ranCommand) return undefined;
  const whole = result.commandOutput ?? {
    text: result.output,
    bytes: Buffer.byteLength(result.output),
    truncated: false,
  };
  const within = keptText(whole.text);
  return { text: within, bytes: whole.bytes, truncated: whole.truncated || within !== whole.text };
}

/** The text as is, or (longer than KEPT_OUTPUT_BYTES) its head and tail with a line saying what was cut. */
function keptText(text: string): string {
  const buf = Buffer.from(text);
  if (buf.length <= KEPT_OUTPUT_BYTES) return text;
  const half = Math.floor((KEPT_OUTPUT_BYTES - 100) / 2);
  // Cut at character boundaries: a UTF-8 continuation byte is 10xxxxxx.
  let end = half;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  let start = buf.length - half;
  while (start < buf.length && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
  return `${buf.subarray(0, end).toString('utf8')}\n[… ${start - end} bytes of output cut …]\n${buf.subarray(start).toString('utf8')}`;
}

/**
 * A tool call is stored, then appended to the execution log the task's readers follow. The log
 * carries the output's last lines (`outputTail`), not the whole output: the task is read again
 * while it runs, and the whole output is in the plan's record (`plan explain --output`).
 */
export function callRecorder(
  io: Pick<PlanRunPorts, 'plans'>,
  turn: TaskHandle,
): (call: ToolCallRecord) => Promise<void> {
  return async (call) => {
    await io.plans.putToolCall(call);
    const { output, ...logged } = call;
    const data = output ? { ...logged, outputTail: outputTail(output.text).text } : logged;
    await turn.artifact(
      { artifactId: 'execution-log', name: 'execution log', parts: [{ data, mediaType: 'application/json' }] },
      { append: true },
    );
  };
}

/** The sandboxes' changes as the `diff` artifact; returns their totals. */
export async function diffArtifact(
  io: Pick<PlanRunPorts, 'recorder'>,
  plan: Plan,
  turn: TaskHandle,
): Promise<{ files: number; additions: number; deletions: number }> {
  const diffs = await io.recorder.diffs(plan);
  const stats = totalStats(diffs);
  await turn.artifact({
    artifactId: 'diff',
    name: 'diff',
    parts: [
      { text: diffs.map((x) => x.diff.unified).join(''), mediaType: 'text/x-diff' },
      {
        data: {
          stats,
          sandboxes: diffs.map((x) => ({ resource: x.resource, files: x.diff.files, stats: x.diff.stats })),
        },
        mediaType: 'application/json',
      },
    ],
  });
  return stats;
}

/** `3 files changed (+10 −2)`. */
export function changedFiles(stats: { files: number; additions: number; deletions: number }): string {
  return `${stats.files} file${stats.files === 1 ? '' : 's'} changed (+${stats.additions} −${stats.deletions})`;
}

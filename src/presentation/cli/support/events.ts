import type { StreamResponse } from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';

/** Where a plan task's progress messages say which phase and state the plan is in. */
const PLAN_META = 'urn:cleveragents:plan';

export interface PlanPhase {
  planId: string;
  phase: string;
  state: string;
  /** How far the phase got (execute: the steps or tool calls done), when the message says. */
  stepsDone?: number;
}

/**
 * `--events` (with `--format json`): what happens, as it happens, one JSON object per line on
 * stdout — `{"type":"event","seq":…,<the stream event>}` for each status or artifact update,
 * `{"type":"phase","planId":…,"phase":…,"state":…}` when a plan's phase or state changes — and
 * then the command's envelope, on one line too (the runner prints it: see {@link eventsWanted}).
 */
export class EventLines {
  private lastPhase = '';

  private readonly out: NodeJS.WritableStream;

  constructor(out: NodeJS.WritableStream) {
    this.out = out;
  }

  event(seq: number, event: StreamResponse): void {
    this.write({ type: 'event', seq, ...event });
    const phase = phaseOf(event);
    if (phase) this.phase(phase);
  }

  /** A plan's phase and state, written when they changed since the last one written. */
  phase(p: PlanPhase): void {
    const key = `${p.planId}\u0000${p.phase}\u0000${p.state}`;
    if (key === this.lastPhase) return;
    this.lastPhase = key;
    this.write({ type: 'phase', planId: p.planId, phase: p.phase, state: p.state });
  }

  private write(line: object): void {
    this.out.write(`${JSON.stringify(line)}\n`);
  }
}

/** The command's `--events` lines, or undefined without the flag; refused outside `--format json`. */
export function eventLines(
  ctx: { ui: { format: string }; io: { stdout: NodeJS.WritableStream } },
  enabled: boolean | undefined,
): EventLines | undefined {
  if (enabled !== true) return undefined;
  if (ctx.ui.format !== 'json')
    throw new UsageError('--events needs --format json', 'e.g. agents --format json send --events "…"');
  return new EventLines(ctx.io.stdout);
}

/** True when the command prints `--events` lines: its envelope then goes on one line of its own. */
export function eventsWanted(flags: object, format: string): boolean {
  return (flags as { events?: unknown }).events === true && format === 'json';
}

/**
 * The plan's phase and state a plan task's event carries, if it is one: the plan service puts them
 * on the status event's metadata (a message, where one came with them, may carry them too).
 */
function phaseOf(event: StreamResponse): PlanPhase | undefined {
  if ('statusUpdate' in event)
    return planPhaseIn(event.statusUpdate.metadata) ?? planPhaseIn(event.statusUpdate.status.message?.metadata);
  if ('task' in event) return planPhaseIn(event.task.status.message?.metadata);
  return undefined;
}

/** The plan's phase, state and progress in a plan task's metadata (of a status event, or of its message). */
export function planPhaseIn(metadata: Record<string, unknown> | undefined): PlanPhase | undefined {
  const meta = metadata?.[PLAN_META] as Partial<PlanPhase> | undefined;
  if (typeof meta?.planId !== 'string' || typeof meta.phase !== 'string' || typeof meta.state !== 'string')
    return undefined;
  return {
    planId: meta.planId,
    phase: meta.phase,
    state: meta.state,
    ...(typeof meta.stepsDone === 'number' ? { stepsDone: meta.stepsDone } : {}),
  };
}

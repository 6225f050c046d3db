import { planPhaseOf, type PlanPhase, type StreamResponse } from '../../../protocol/client/index.ts';
import { UsageError } from '../exit-codes.ts';

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
    const phase = planPhaseOf(event);
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

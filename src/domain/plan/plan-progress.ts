/**
 * The changes to a plan besides its phase and state (plan.ts moves those): its cursor, attempt,
 * strategy size, definition of done, error, confinement, sandboxes and time. Outside the domain a
 * plan is changed only through these functions (issue #38), each refusing what would make the
 * plan's record say something untrue.
 */
import { AppError } from '../errors.ts';
import type { Confinement, Plan, PlanRecord } from './plan.ts';
import { writable } from './writable.ts';

function refuse(p: Plan, what: string): never {
  throw new AppError('INTERNAL', `plan ${p.id}: ${what}`, { details: { planId: p.id } });
}

/** The work has reached `cursor` (a step index, a write count, or a checkpoint's step): never negative. */
export function moveCursor(p: Plan, cursor: number): void {
  if (!Number.isInteger(cursor) || cursor < 0) refuse(p, `the cursor cannot be ${cursor}`);
  writable(p).cursor = cursor;
}

/** A call of the execution actor wrote: the cursor counts it; the new cursor (its checkpoint's step). */
export function countWrite(p: Plan): number {
  moveCursor(p, p.cursor + 1);
  return p.cursor;
}

/** The strategy has `steps` decisions (or the action `steps` steps). */
export function setStepsTotal(p: Plan, steps: number): void {
  if (!Number.isInteger(steps) || steps < 0) refuse(p, `a strategy cannot have ${steps} steps`);
  writable(p).stepsTotal = steps;
}

/** Whether the definition of done was met, decided when an execute run ends (undefined: a new run decides anew). */
export function judgeDone(p: Plan, done: PlanRecord['done']): void {
  if (p.phase !== 'execute') refuse(p, `the definition of done is judged in execute, not ${p.phase}`);
  writable(p).done = done;
}

/** The apply phase starts on its task: an earlier apply's error is history. */
export function startApply(p: Plan, taskId: string): void {
  writable(p).tasks.apply = taskId;
  writable(p).error = undefined;
}

/** A correction starts a new attempt (its decisions and checkpoints are told apart by it). */
export function newAttempt(p: Plan): void {
  writable(p).attempt++;
}

/**
 * A correction sends the plan back to `cursor` with its error cleared; `fresh` (the whole strategy
 * decided again) also drops what it waited for and the definition of done.
 */
export function revertTo(p: Plan, cursor: number, opts: { fresh?: boolean } = {}): void {
  moveCursor(p, cursor);
  writable(p).error = undefined;
  if (opts.fresh) {
    writable(p).waiting = undefined;
    writable(p).done = undefined;
  }
}

/** How the plan's commands run: confinement `none` is recorded and stays; `confined` only until then. */
export function noteConfinement(p: Plan, how: Confinement | 'unavailable' | undefined): void {
  if (how === 'none' || (how === 'confined' && p.confinement === undefined)) writable(p).confinement = how;
}

/** The plan's sandboxes were removed (`cancel --clean`): only a cancelled plan loses them. */
export function dropSandboxes(p: Plan): void {
  if (p.state !== 'cancelled') refuse(p, `only a cancelled plan's sandboxes are removed, not a ${p.state} one's`);
  writable(p).sandboxes = [];
}

/** The plan's record is saved now. */
export function touch(p: Plan, at: Date): void {
  writable(p).updatedAt = at.toISOString();
}

/** The task a phase runs on (the plan's record of where to follow it). */
export function attachTask(p: Plan, phase: 'strategize' | 'execute' | 'apply', taskId: string): void {
  writable(p).tasks[phase] = taskId;
}

/** The plan's sandbox for one more resource, made before its first execute. */
export function addSandbox(p: Plan, sandbox: PlanRecord['sandboxes'][number]): void {
  if (p.sandboxes.some((s) => s.resource === sandbox.resource))
    refuse(p, `resource ${sandbox.resource} has a sandbox already`);
  writable(p).sandboxes.push(sandbox);
}

/** A model step used `tokens` and cost `cost` (in the actors' price currency; kept to 6 decimals). */
export function countModelUsage(p: Plan, tokens: number, cost: number | undefined): void {
  if (!(tokens >= 0) || (cost !== undefined && !(cost >= 0)))
    refuse(p, `a model step cannot use ${tokens} tokens at ${cost}`);
  const u = writable(p).usage;
  u.tokens += tokens;
  if (cost) u.costUsd = Math.round((u.costUsd + cost) * 1e6) / 1e6;
}

/** A tool call ran (it counts against the tool-call budget). */
export function countToolCall(p: Plan): void {
  writable(p).usage.toolCalls++;
}

/** The wall-clock time the plan's runs have used so far (it never goes back: two clocks keep the later). */
export function setWallTime(p: Plan, ms: number): void {
  writable(p).usage.wallMs = Math.max(p.usage.wallMs, ms);
}

/** A run given new budgets (`plan execute --max-…`): each set one must be positive. */
export function setBudget(
  p: Plan,
  b: {
    maxToolCalls?: number | undefined;
    maxWallMs?: number | undefined;
    maxTokens?: number | undefined;
    maxCost?: number | undefined;
  },
): void {
  for (const [k, v] of Object.entries(b))
    if (v !== undefined && !(v > 0)) refuse(p, `budget ${k} must be positive, not ${v}`);
  if (b.maxToolCalls) writable(p).budget.maxToolCalls = b.maxToolCalls;
  if (b.maxWallMs) writable(p).budget.maxWallMs = b.maxWallMs;
  if (b.maxTokens) writable(p).budget.maxTokens = b.maxTokens;
  if (b.maxCost) writable(p).budget.maxCost = b.maxCost;
}

/** A sandbox as it now is (after a rebase moved its base). */
export function replaceSandbox(p: Plan, index: number, sandbox: PlanRecord['sandboxes'][number]): void {
  if (!p.sandboxes[index] || p.sandboxes[index].resource !== sandbox.resource)
    refuse(p, `sandbox ${index} is not the sandbox of ${sandbox.resource}`);
  writable(p).sandboxes[index] = sandbox;
}

/**
 * Runs the hooks of an event (issue #17): the registered hooks of the namespace that match the
 * event, its project (or none: global hooks) and its tool, in name order, each given the event
 * JSON. A run is recorded on the task as a `hook` artifact. A hook of a veto event (before a tool
 * call, before apply) that denies — or cannot answer — stops the first one that does: the caller
 * gets the veto and does not do what was vetoed. Hooks are the platform's: actors never call them.
 */
import type { Artifact } from '../../domain/a2a.model.ts';
import { newId } from '../../domain/ids.ts';
import {
  decideHook,
  DEFAULT_HOOK_TIMEOUT_SECONDS,
  hookMatches,
  truncateBytes,
  VETO_EVENTS,
  type HookDecision,
  type HookDefinition,
  type HookEventName,
} from '../../domain/registry/hook.ts';
import type { HookRunner } from '../ports/hook-runner.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import { messageOf } from '../../domain/errors.ts';

/** One hook run, as recorded on the task (the `hook` artifact's data). */
export interface HookRun {
  hook: string;
  event: HookEventName;
  tool?: string | undefined;
  decision: HookDecision;
  /** Why it denied or failed. */
  reason?: string | undefined;
  exitCode?: number | null | undefined;
  status?: number | undefined;
  /** At most 4 KiB of its output (stdout and stderr; a webhook's body). */
  output: string;
  truncated: boolean;
  durationMs: number;
}

/** A veto: the hook that denied and why. */
export interface HookVeto {
  hook: string;
  reason: string;
}

/** Where an event happens and how its hooks' runs are reported. */
export interface HookContext {
  /** The namespace whose hooks apply: the project's, or the session owner's without a project. */
  namespace: string;
  /** The project (a chat's; a plan's first) and, for a plan on several, all of them. */
  project?: string | undefined;
  projects?: readonly string[] | undefined;
  plan?: string | undefined;
  session?: string | undefined;
  /** The task the runs are recorded on. */
  task?: string | undefined;
  /** Where a command runs: the chat project's resource root, or the plan's sandbox. */
  workdir?: string | undefined;
  network?: 'none' | 'allow' | undefined;
  signal: AbortSignal;
  /** Adds an artifact to the task (ActorTurn.artifact, TaskHandle.artifact). */
  artifact(a: Artifact): Promise<void>;
}

/** What the event carries besides where it happens (tool, arguments, result, phase, …). */
export interface HookEventFields {
  tool?: string | undefined;
  [field: string]: unknown;
}

export interface HookServiceDeps {
  /** The hooks registered in a namespace. */
  hooksOf(namespace: string): Promise<HookDefinition[]>;
  /** A project's network setting (what its commands may reach), for hooks whose caller names none. */
  projectNetwork(project: string): Promise<'none' | 'allow' | undefined>;
  runner: HookRunner;
  logger: Logger;
  /** Why a hook may not run now (a capability its namespace no longer holds), or undefined. */
  refusal?: ((hook: HookDefinition) => Promise<string | undefined>) | undefined;
  /** Whether a hook's webhook may reach loopback and private addresses (its namespace holds private-network). */
  privateNetwork?: ((hook: HookDefinition) => Promise<boolean>) | undefined;
}

/** How a veto reads to the actor (and on the tool-call artifact). */
export const vetoText = (v: HookVeto): string => `Vetoed by hook ${v.hook}: ${v.reason}`;

export class HookService {
  private readonly deps: HookServiceDeps;

  constructor(deps: HookServiceDeps) {
    this.deps = deps;
  }

  /**
   * Runs the event's hooks in name order and records each run; for a veto event the first hook
   * that denies ends it with a veto (its later hooks do not run). Hooks that cannot be read make
   * a veto event refuse too (fail closed), and are logged for the others. `ran` counts the hooks
   * that were run.
   */
  async fire(
    event: HookEventName,
    fields: HookEventFields,
    ctx: HookContext,
  ): Promise<{ veto?: HookVeto; ran?: number }> {
    const veto = VETO_EVENTS.has(event);
    let hooks: HookDefinition[];
    try {
      hooks = (await this.deps.hooksOf(ctx.namespace)).filter((h) =>
        hookMatches(h, { event, projects: ctx.projects ?? (ctx.project ? [ctx.project] : []), tool: fields.tool }),
      );
    } catch (err) {
      this.deps.logger.warn({ err, event, namespace: ctx.namespace }, 'the hooks could not be read');
      return veto ? { veto: { hook: '(registry)', reason: `the hooks could not be read: ${messageOf(err)}` } } : {};
    }
    if (hooks.length === 0) return {};
    const network =
      ctx.network ?? (ctx.project ? await this.deps.projectNetwork(ctx.project).catch(() => undefined) : undefined);
    for (const [i, hook] of hooks.entries()) {
      const run = await this.runOne(hook, event, fields, { ...ctx, network: network ?? 'none' });
      if (run.decision === 'deny') return { veto: { hook: hook.name, reason: run.reason ?? 'denied' }, ran: i + 1 };
    }
    return { ran: hooks.length };
  }

  private async runOne(
    hook: HookDefinition,
    event: HookEventName,
    fields: HookEventFields,
    ctx: HookContext,
  ): Promise<HookRun> {
    const payload = JSON.stringify({
      event,
      hook: hook.name,
      ...(ctx.project ? { project: ctx.project } : {}),
      ...(ctx.projects && ctx.projects.length > 1 ? { projects: ctx.projects } : {}),
      ...(ctx.plan ? { plan: ctx.plan } : {}),
      ...(ctx.session ? { session: ctx.session } : {}),
      ...(ctx.task ? { task: ctx.task } : {}),
      ...fields,
    });
    const timeoutSeconds = hook.timeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS;
    const t0 = Date.now();
    let outcome;
    const refused = await this.deps.refusal?.(hook).catch((err: Error) => err.message);
    try {
      if (refused !== undefined) throw new Error(refused);
      outcome = await this.deps.runner.run({
        hook,
        payload,
        workdir: ctx.workdir,
        network: ctx.network ?? 'none',
        privateNetwork: hook.webhook ? await this.deps.privateNetwork?.(hook) : undefined,
        timeoutMs: timeoutSeconds * 1000,
        signal: ctx.signal,
      });
    } catch (err) {
      // The runner reports a hook's failures itself; a throw is ours, and still fails closed.
      this.deps.logger.error({ err, hook: hook.name }, 'a hook could not be run');
      outcome = { answer: '', output: '', failure: `it could not be run: ${messageOf(err)}` };
    }
    // Cancelled with its task: nothing more is recorded, and the caller (which stops on its
    // aborted signal) must not go on as if the hook had answered.
    if (ctx.signal.aborted) throw new Error(`hook ${hook.name} was cancelled with its task`);
    const decided = decideHook(event, outcome);
    const kept = truncateBytes(outcome.output);
    const run: HookRun = {
      hook: hook.name,
      event,
      ...(fields.tool !== undefined ? { tool: fields.tool } : {}),
      decision: decided.decision,
      ...(decided.reason !== undefined ? { reason: decided.reason } : {}),
      ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
      ...(outcome.status !== undefined ? { status: outcome.status } : {}),
      output: kept.text,
      truncated: kept.truncated,
      durationMs: Date.now() - t0,
    };
    await ctx.artifact(hookArtifact(run));
    return run;
  }
}

/** A hook run as a task artifact: a `hook` data part. */
export function hookArtifact(run: HookRun): Artifact {
  return {
    artifactId: `hook-${newId()}`,
    name: 'hook',
    parts: [{ data: { ...run }, mediaType: 'application/json' }],
    metadata: { kind: 'hook' },
  };
}

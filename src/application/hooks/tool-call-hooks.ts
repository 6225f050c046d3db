/**
 * The two hook points of a tool call, bound to where the call happens (a chat turn, a plan's
 * execute phase): before it runs (a veto stops it; the actor is told why) and after it ran.
 */
import type { Artifact } from '../../domain/a2a.model.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import { truncateBytes } from '../../domain/registry/hook.ts';
import type { HookService, HookVeto } from './hook.service.ts';

/** How much of a tool's output an after-tool-call hook is given (bytes). */
const RESULT_OUTPUT_BYTES = 64 * 1024;

export interface ToolCallHooks {
  /** Runs the before-tool-call hooks: a veto means the call must not run. */
  before(tool: string, args: unknown): Promise<HookVeto | undefined>;
  /** Runs the after-tool-call hooks with what the call gave back. */
  after(tool: string, args: unknown, result: { ok: boolean; summary: string; output: string }): Promise<void>;
  /** How many hooks have run so far (each a command that may have changed files). */
  readonly ran: number;
}

/** Where the calls happen: the task they are recorded on, and the project, session or plan. */
export interface ToolCallSite {
  task: { id: string };
  /** The session owner's namespace: a chat without a project runs that namespace's global hooks. */
  owner: string;
  project?: string | undefined;
  /** A plan's projects (its first is `project`). */
  projects?: readonly string[] | undefined;
  session?: string | undefined;
  plan?: string | undefined;
  /** The resource root (chat) or the sandbox (plan) a hook's command runs in. */
  workdir?: string | undefined;
  network?: 'none' | 'allow' | undefined;
  signal: AbortSignal;
  artifact(a: Artifact): Promise<void>;
}

/** The tool-call hooks of one site (undefined without a hook service: nothing to run). */
export function toolCallHooks(hooks: HookService | undefined, site: ToolCallSite): ToolCallHooks | undefined {
  if (!hooks) return undefined;
  const ctx = {
    namespace: site.project ? namespaceOf(site.project) : site.owner,
    project: site.project,
    projects: site.projects,
    session: site.session,
    plan: site.plan,
    task: site.task.id,
    workdir: site.workdir,
    network: site.network,
    signal: site.signal,
    artifact: (a: Artifact) => site.artifact(a),
  };
  let ran = 0;
  return {
    async before(tool, args) {
      const fired = await hooks.fire('before-tool-call', { tool, arguments: args }, ctx);
      ran += fired.ran ?? 0;
      return fired.veto;
    },
    async after(tool, args, result) {
      const output = truncateBytes(result.output, RESULT_OUTPUT_BYTES);
      const fired = await hooks.fire(
        'after-tool-call',
        {
          tool,
          arguments: args,
          result: { ok: result.ok, summary: result.summary, output: output.text, truncated: output.truncated },
        },
        ctx,
      );
      ran += fired.ran ?? 0;
    },
    get ran() {
      return ran;
    },
  };
}

/**
 * Ids as a user types them, on the CLI's side: `last` of the current project, and a session or
 * task named where the id travels in a message (an A2A contextId or taskId), where routing must get
 * the full id rather than guess. A prefix elsewhere is resolved by the server (every session method
 * and GetTask accept a unique prefix or `last`).
 */
import {
  getTask,
  planList,
  sessionList,
  sessionShow,
  type A2AClient,
  type Session,
} from '../../../protocol/client/index.ts';
import { CliError } from '../exit-codes.ts';
import { qualify } from '../render/definition.render.ts';
import type { RunContext } from '../runner.ts';
import { currentProject, CURRENT_PROJECT_CALLS } from '../init/current-project.ts';

/** The word for the most recent plan, session or task (of the current project, where the CLI knows one). */
export const LAST = 'last';

/** The methods {@link sessionRef} may call (declare them with `.calls`). */
export const SESSION_REF_CALLS = [sessionList, ...CURRENT_PROJECT_CALLS] as const;

/** The methods {@link planRef} may call (declare them with `.calls`). */
export const PLAN_REF_CALLS = [planList, ...CURRENT_PROJECT_CALLS] as const;

/** The help text of a plan id argument. */
export const PLAN_REF_HELP =
  "the plan: its id, a unique prefix of it, or `last` (the newest plan of the current project — the current directory's in local mode, else config defaultProject — or, with none, your newest)";

/** The help text of a session id argument or option. */
export const SESSION_REF_HELP =
  "the session: its id, a unique prefix of it, or `last` (the most recently active session of the current project — the current directory's in local mode, else config defaultProject — or, with none, your most recently active)";

/**
 * What to send for the session `ref`: `last` becomes the id of the newest session of the current
 * project (`project`, else the current directory's in local mode, else config `defaultProject`);
 * without a current project, `last` is left to the server (the caller's newest session). Any
 * other ref goes as it is.
 */
export async function sessionRef(ctx: RunContext, client: A2AClient, ref: string, project?: string): Promise<string> {
  return lastOfProject(ctx, client, ref, project, 'session', async (name) => {
    const page = await client.call(sessionList, { project: name, pageSize: 1 }, { signal: ctx.signal });
    return page.sessions[0]?.id;
  });
}

/** What to send for the plan `ref`: `last` of the current project as {@link sessionRef} does (its newest plan). */
export async function planRef(ctx: RunContext, client: A2AClient, ref: string): Promise<string> {
  return lastOfProject(ctx, client, ref, undefined, 'plan', async (name) => {
    const page = await client.call(planList, { project: name, pageSize: 1 }, { signal: ctx.signal });
    return page.plans[0]?.planId;
  });
}

/** `ref`, or for `last` with a current project the id `newest` finds in it (NOT_FOUND when none). */
async function lastOfProject(
  ctx: RunContext,
  client: A2AClient,
  ref: string,
  project: string | undefined,
  kind: 'session' | 'plan',
  newest: (project: string) => Promise<string | undefined>,
): Promise<string> {
  if (ref !== LAST) return ref;
  const current = await currentProject(ctx, client, project);
  if (!current) return ref;
  const name = qualify(current.name);
  const id = await newest(name);
  if (id !== undefined) return id;
  const why = { flag: '--project', directory: 'this directory', config: 'defaultProject in config.yaml' }[
    current.source
  ];
  const start = kind === 'session' ? 'start one with `agents chat`' : `start one with agents plan use <action> ${name}`;
  throw new CliError(
    `You have no ${kind} in project ${name} (${why}) yet, so \`last\` names none`,
    'NOT_FOUND',
    kind === 'session' ? 'SessionNotFound' : 'PlanNotFound',
    `${start}, or name another ${kind} (agents ${kind} list)`,
    { entity: kind, id: ref, project: name },
  );
}

/** The session a message goes to, by its full id: `ref` resolved as {@link sessionRef}, then by the server. */
export async function sessionOfRef(
  ctx: RunContext,
  client: A2AClient,
  ref: string,
  project?: string,
): Promise<Session> {
  const id = await sessionRef(ctx, client, ref, project);
  return (await client.call(sessionShow, { sessionId: id, turns: 1 }, { signal: ctx.signal })).session;
}

/** The full id of the task `ref` names (its id, a unique prefix, or `last`: the caller's newest task). */
export async function taskIdOfRef(ctx: RunContext, client: A2AClient, ref: string): Promise<string> {
  return (await client.call(getTask, { id: ref, historyLength: 0 }, { signal: ctx.signal })).id;
}

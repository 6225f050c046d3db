/**
 * Ids as a user types them, on the CLI's side: `last` of the current project, and a session or
 * task named where the id travels in a message (an A2A contextId or taskId), where routing must get
 * the full id rather than guess. A prefix elsewhere is resolved by the server (every session method
 * and GetTask accept a unique prefix or `last`).
 */
import { getTask, sessionList, sessionShow, type A2AClient, type Session } from '../../../protocol/client/index.ts';
import { CliError } from '../exit-codes.ts';
import type { RunContext } from '../runner.ts';
import { currentProject, CURRENT_PROJECT_CALLS } from '../init/current-project.ts';

/** A bare name means local/<name>, as everywhere else in the CLI. */
export const qualifiedName = (name: string): string => (name.includes('/') ? name : `local/${name}`);

/** The word for the most recent session (or task) of the current project, as the server knows it. */
export const LAST = 'last';

/** The methods {@link sessionRef} may call (declare them with `.calls`). */
export const SESSION_REF_CALLS = [sessionList, ...CURRENT_PROJECT_CALLS] as const;

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
  if (ref !== LAST) return ref;
  const current = await currentProject(ctx, client, project);
  if (!current) return ref;
  const name = qualifiedName(current.name);
  const page = await client.call(sessionList, { project: name, pageSize: 1 }, { signal: ctx.signal });
  const newest = page.sessions[0];
  if (newest) return newest.id;
  const why = { flag: '--project', directory: 'this directory', config: 'defaultProject in config.yaml' }[
    current.source
  ];
  throw new CliError(
    `You have no session in project ${name} (${why}) yet, so \`last\` names none`,
    'NOT_FOUND',
    'SessionNotFound',
    `start one with \`agents chat\`, or name another session (agents session list)`,
    { entity: 'session', id: ref, project: name },
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

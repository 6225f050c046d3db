import type { ListSessionsRequest, ListSessionsResponse, SessionInfo } from '@agentclientprotocol/sdk';
import { randomUUID } from 'node:crypto';
import { sessionList, type A2AClient, type Message, type Part, type Session } from '../../protocol/client/index.ts';
import type { PlanSession } from './plans.ts';
import { canonical, projectRoots } from './workspace.ts';

/**
 * `session/list`: your sessions that work on a project, most recently active first, each with its
 * project's folder as the cwd (a session without a project has no folder to report, so it is left
 * out); `cwd` keeps the sessions of that folder. The cursor is the backend's page token.
 */
export async function listSessions(client: A2AClient, params: ListSessionsRequest): Promise<ListSessionsResponse> {
  const { roots } = await projectRoots(client);
  const page = await client.call(sessionList, {
    pageSize: 100,
    ...(params.cursor ? { pageToken: params.cursor } : {}),
  });
  const wanted = params.cwd ? canonical(params.cwd) : undefined;
  const sessions: SessionInfo[] = [];
  for (const s of page.sessions) {
    const cwd = s.project ? roots.get(s.project) : undefined;
    if (!cwd || (wanted !== undefined && canonical(cwd) !== wanted)) continue;
    sessions.push({ sessionId: s.id, cwd, title: s.title ?? `${s.actor} · ${s.project}`, updatedAt: s.updatedAt });
  }
  return { sessions, ...(page.nextPageToken ? { nextCursor: page.nextPageToken } : {}) };
}

/** What a bridge session keeps of its A2A session for plan commands. */
export const planSession = (session: Session, root: string | undefined): PlanSession => ({
  id: session.id,
  root,
  project: session.project,
  actor: session.actor,
});

/** The A2A session as `_meta` shows it to the editor. */
export const sessionMeta = (s: Session): Record<string, unknown> => ({
  id: s.id,
  actor: s.actor,
  ...(s.project ? { project: s.project } : {}),
  ...(s.skills?.length ? { skills: s.skills } : {}),
});

/** A user message of the session (on the waiting task, when it answers one). */
export const userMessage = (sessionId: string, parts: Part[], taskId: string | undefined): Message => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts,
  contextId: sessionId,
  ...(taskId ? { taskId } : {}),
});

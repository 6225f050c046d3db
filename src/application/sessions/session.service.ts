import type { Task } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import { newId, SAFE_ID } from '../../domain/ids.ts';
import { resolveRef } from '../id-refs.ts';
import { decodeUpdateCursor, encodeUpdateCursor } from '../../domain/paging.ts';
import {
  CHAT_CONTEXT_MODES,
  FIRST_MESSAGE_CHARS,
  type ChatContextMode,
  type Session,
  type SessionListItem,
  type TurnChange,
} from '../../domain/session.ts';
import type { ActorCatalog } from '../ports/actor.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { ForkedTurn, SessionRepository } from '../ports/session.repository.port.ts';
import type { TaskRepository } from '../ports/task.repository.port.ts';
import type { Transcript, TranscriptStore } from '../ports/transcript.port.ts';
import { viewTask } from '../tasks/task.views.ts';
import { forkTitle, MAX_FORK_TURNS, remapIds, turnsToCopy } from './session-fork.ts';

export interface CreateSessionInput {
  actor?: string | undefined;
  title?: string | undefined;
  /** The project the session's tools work on. */
  project?: string | undefined;
  /** Skills added to the actor's for this session. */
  skills?: string[] | undefined;
  /** What its turns are given of the project's files (absent: `map`). */
  context?: ChatContextMode | undefined;
}

/** What `session/update` may change (absent: unchanged). */
export interface UpdateSessionInput {
  actor?: string | undefined;
  /** Replace the session's skills (empty: none). */
  skills?: string[] | undefined;
  context?: ChatContextMode | undefined;
}

/** Checks that a principal may use registry entities (the session's project and skills). */
export type EntityCheck = (kind: 'actor' | 'project' | 'skill', name: string, principal: Principal) => Promise<void>;

export interface SessionDetail {
  session: Session;
  /** The session's turns (A2A tasks), oldest first. */
  tasks: Task[];
  /** The number of the first turn shown (turns are numbered 1, 2, … from the session's first). */
  firstTurn: number;
  /** The turns that changed the project's files (all of the session's, not only those shown). */
  changes: TurnChange[];
}

export interface ForkSessionInput {
  /** The last turn copied (default: all of them). */
  atTaskId?: string | undefined;
  /** Default: the original's title, marked as a fork. */
  title?: string | undefined;
}

export interface SessionServiceDeps {
  sessions: SessionRepository;
  tasks: TaskRepository;
  /** LLM turn transcripts, copied into forks (absent: no LLM actors, no transcripts). */
  transcripts?: TranscriptStore | undefined;
  actors: ActorCatalog;
  defaultActor: string;
  /** Refuses a project or skill the principal cannot read (NOT_FOUND). */
  checkEntity?: EntityCheck;
  /** The turns of a session that changed files (TurnHistoryService; absent: none are recorded). */
  changes?: ((sessionId: string) => Promise<TurnChange[]>) | undefined;
  now?: () => Date;
}

/** Chat sessions: the A2A contexts that `message/send` talks into, each with its actor. */
export class SessionService {
  private readonly now: () => Date;

  private readonly deps: SessionServiceDeps;

  constructor(deps: SessionServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  get defaultActor(): string {
    return this.deps.defaultActor;
  }

  async create(input: CreateSessionInput, principal: Principal, id: string = newId()): Promise<Session> {
    const { session, stored } = await this.open(input, principal, id);
    await stored;
    return session;
  }

  /**
   * The session a message goes to: the given context (created on first use) or a new one. The row
   * of a new session with an id of ours is only queued — `stored` settles once it is — so the
   * caller can store its task in the same commit, and must await `stored` before answering. A
   * client-chosen id may race another creator, so that row is stored before this returns.
   */
  async resolveForMessage(
    contextId: string | undefined,
    principal: Principal,
  ): Promise<{ session: Session; stored: Promise<void> }> {
    if (contextId === undefined || contextId === '') return this.open({}, principal, newId());
    const existing = await this.deps.sessions.get(contextId);
    if (existing) {
      if (existing.owner !== principal.namespace) throw unknownContext(contextId);
      return { session: existing, stored: Promise.resolve() };
    }
    if (!SAFE_ID.test(contextId)) {
      throw new AppError(
        'INVALID_PARAMS',
        'message.contextId must be 1-128 characters of letters, digits and . _ : @ -',
        {
          fields: [
            { field: 'message.contextId', description: 'letters, digits and . _ : @ - only, at most 128 characters' },
          ],
        },
      );
    }
    return { session: await this.create({}, principal, contextId), stored: Promise.resolve() };
  }

  /** Checks and builds a session and queues its row; `stored` settles when the row is stored. */
  private async open(
    input: CreateSessionInput,
    principal: Principal,
    id: string,
  ): Promise<{ session: Session; stored: Promise<void> }> {
    const actor = input.actor ?? this.deps.defaultActor;
    await this.checkSettings({ actor: input.actor, skills: input.skills, context: input.context }, principal);
    if (this.deps.checkEntity && input.project !== undefined)
      await this.deps.checkEntity('project', input.project, principal);
    const at = this.now().toISOString();
    const session: Session = { id, owner: principal.namespace, actor, createdAt: at, updatedAt: at, taskCount: 0 };
    if (input.title !== undefined) session.title = input.title;
    if (input.project !== undefined) session.project = input.project;
    if (input.skills !== undefined && input.skills.length > 0) session.skills = [...new Set(input.skills)];
    if (input.context !== undefined) session.context = input.context;
    const stored = this.deps.sessions.create(session);
    stored.catch(() => {}); // the caller awaits it
    return { session, stored };
  }

  /**
   * Changes what the caller's session `id` uses from its next turn on: its actor, skills and
   * context mode (each given one replaces the old; an empty skills list clears them). The same
   * checks as {@link create}: an actor must exist and be one the caller may read (else NOT_FOUND
   * listing the caller's actors), skills readable, the mode known. A turn already running goes on
   * with what it started with.
   */
  async update(ref: string, input: UpdateSessionInput, principal: Principal): Promise<Session> {
    const session = await this.get(ref, principal);
    const id = session.id;
    if (input.actor === undefined && input.skills === undefined && input.context === undefined)
      throw new AppError('INVALID_PARAMS', 'Nothing to update: give actor, skills or context', {
        fields: [{ field: 'actor', description: 'give actor, skills or context' }],
      });
    await this.checkSettings(input, principal);
    const next: Session = { ...session };
    if (input.actor !== undefined) next.actor = input.actor;
    if (input.skills !== undefined) {
      if (input.skills.length > 0) next.skills = [...new Set(input.skills)];
      else delete next.skills;
    }
    if (input.context !== undefined) next.context = input.context;
    const at = this.now().toISOString();
    const settings = { actor: next.actor, skills: next.skills, context: next.context };
    // Deleted meanwhile (by the owner, from elsewhere): answered as any missing session.
    if (!(await this.deps.sessions.updateSettings(id, settings, at))) throw sessionNotFound(id);
    return { ...next, updatedAt: at > session.updatedAt ? at : session.updatedAt };
  }

  /**
   * What a session may be set to use: an actor that exists and that the caller may read (its
   * definition may name a namespace's secrets; the server's default actor is the administrator's
   * choice for everyone), skills the caller may read, and a known context mode.
   */
  private async checkSettings(input: UpdateSessionInput, principal: Principal): Promise<void> {
    const actor = input.actor ?? this.deps.defaultActor;
    if (!(await this.deps.actors.resolve(actor))) throw await this.unknownActor(actor, principal);
    if (input.context !== undefined && !(CHAT_CONTEXT_MODES as readonly string[]).includes(input.context))
      throw new AppError('INVALID_PARAMS', `There is no chat context mode ${JSON.stringify(input.context)}`, {
        fields: [{ field: 'context', description: `must be one of ${CHAT_CONTEXT_MODES.join(', ')}` }],
      });
    const check = this.deps.checkEntity;
    if (check && input.actor !== undefined && input.actor !== this.deps.defaultActor)
      try {
        await check('actor', input.actor, principal);
      } catch (err) {
        // Another namespace's actor reads as a missing one, with the same hint.
        if (err instanceof AppError && err.reason === 'NOT_FOUND') throw await this.unknownActor(actor, principal);
        throw err;
      }
    if (check) for (const s of input.skills ?? []) await check('skill', s, principal);
  }

  /** NOT_FOUND for an actor the caller cannot use, naming the actors they can. */
  private async unknownActor(actor: string, principal: Principal): Promise<AppError> {
    const { names, more } = await this.deps.actors.available(principal);
    return new AppError('NOT_FOUND', `No actor named ${actor}`, {
      details: { entity: 'actor', name: actor, available: names },
      hint: `available actors: ${names.join(', ')}${more > 0 ? ` and ${more} more (agents actor list)` : ''}`,
    });
  }

  /** The session behind a context, if any (no access check: internal use). */
  find(id: string): Promise<Session | undefined> {
    return this.deps.sessions.get(id);
  }

  /**
   * The caller's session named by its id, a unique prefix of it, or `last` (the caller's most
   * recently active session). Only the caller's sessions are looked at.
   */
  get(ref: string, principal: Principal): Promise<Session> {
    return ownedSession(this.deps.sessions, ref, principal);
  }

  async show(ref: string, principal: Principal, turns: number): Promise<SessionDetail> {
    const session = await this.get(ref, principal);
    const id = session.id;
    const [stored, count, changes] = await Promise.all([
      this.deps.tasks.listByContext(id, turns),
      this.deps.tasks.countByContext(id),
      this.deps.changes?.(id) ?? [],
    ]);
    return {
      session,
      tasks: stored.map((s) => viewTask(s.task, { includeArtifacts: true })),
      firstTurn: Math.max(1, count - stored.length + 1),
      changes,
    };
  }

  /**
   * A new session from the caller's session `id`: its turns up to and including `atTaskId`
   * (default: all; every one finished) copied with new task ids — history, artifacts, metadata and
   * transcripts — so the fork's next turn sees that history and nothing after it. The original is
   * not changed; the copy is stored in one transaction.
   */
  async fork(ref: string, input: ForkSessionInput, principal: Principal): Promise<Session> {
    const source = await this.get(ref, principal);
    const id = source.id;
    const count = await this.deps.tasks.countByContext(id);
    if (count > MAX_FORK_TURNS) {
      throw new AppError('INVALID_STATE', `Session ${id} has ${count} turns: a fork copies at most ${MAX_FORK_TURNS}`, {
        details: { sessionId: id, turns: count, max: MAX_FORK_TURNS },
      });
    }
    const copied = turnsToCopy(id, await this.deps.tasks.listByContext(id, count), input.atTaskId);
    const forkId = newId();
    const ids = new Map<string, string>([[id, forkId]]);
    for (const t of copied) ids.set(t.id, newId());
    const transcripts: Map<string, Transcript> =
      this.deps.transcripts && copied.length > 0
        ? await this.deps.transcripts.forContext(
            id,
            copied.map((t) => t.id),
          )
        : new Map<string, Transcript>();
    const turns: ForkedTurn[] = copied.map((t) => {
      const task = remapIds(t, ids);
      task.metadata = { ...task.metadata, forkedFrom: { sessionId: id, taskId: t.id } };
      const transcript = transcripts.get(t.id);
      return transcript ? { task, transcript: remapIds(transcript, ids) } : { task };
    });
    const at = this.now().toISOString();
    const last = copied.at(-1);
    const session: Session = {
      id: forkId,
      owner: source.owner,
      actor: source.actor,
      createdAt: at,
      updatedAt: at,
      taskCount: turns.length,
      forkedFrom: last ? { sessionId: id, taskId: last.id } : { sessionId: id },
    };
    const title = forkTitle(input.title, source.title);
    if (title !== undefined) session.title = title;
    if (source.project !== undefined) session.project = source.project;
    if (source.skills !== undefined) session.skills = [...source.skills];
    if (source.context !== undefined) session.context = source.context;
    await this.deps.sessions.createFork(session, turns);
    return session;
  }

  /** The session to go on with and its last `turns` turns: the given one, or the caller's most recently active. */
  async resume(sessionId: string | undefined, principal: Principal, turns: number): Promise<SessionDetail> {
    if (sessionId !== undefined) return this.show(sessionId, principal, turns);
    const latest = (await this.deps.sessions.list(principal.namespace, 1)).sessions[0];
    if (!latest) {
      throw new AppError('NOT_FOUND', 'You have no session to resume', {
        details: { entity: 'session' },
        hint: 'start one with `agents chat`',
      });
    }
    return this.show(latest.id, principal, turns);
  }

  /** The caller's sessions, most recently active first; with `project`, only those bound to it. */
  async list(
    principal: Principal,
    pageSize: number,
    pageToken?: string,
    project?: string,
  ): Promise<{ sessions: SessionListItem[]; nextPageToken: string; totalSize: number }> {
    const page = await this.deps.sessions.list(
      principal.namespace,
      pageSize,
      pageToken ? decodeUpdateCursor(pageToken) : undefined,
      project,
    );
    const first = await this.deps.tasks.firstMessages(page.sessions.map((s) => s.id));
    return {
      sessions: page.sessions.map((s) => {
        const text = first.get(s.id);
        return text === undefined ? s : { ...s, firstMessage: text.slice(0, FIRST_MESSAGE_CHARS) };
      }),
      nextPageToken: page.next ? encodeUpdateCursor(page.next) : '',
      totalSize: page.total,
    };
  }

  async delete(id: string): Promise<void> {
    await this.deps.sessions.delete(id);
  }

  recordTask(id: string, at: string): Promise<void> {
    return this.deps.sessions.touch(id, at, 1);
  }

  recordActivity(id: string, at: string): Promise<void> {
    return this.deps.sessions.touch(id, at, 0);
  }
}

/**
 * The caller's session named by `ref`: its id, a unique prefix of it, or `last` (the caller's most
 * recently active session). Anyone else's is not found, as a missing one. Every session method
 * resolves its id here, so `show`, `undo`, `diff`, `context`, `compact` … accept the same short ids.
 */
export function ownedSession(sessions: SessionRepository, ref: string, principal: Principal): Promise<Session> {
  const owner = principal.namespace;
  return resolveRef<Session>(ref, {
    kind: 'session',
    exact: async (id) => {
      const s = await sessions.get(id);
      return s?.owner === owner ? s : undefined;
    },
    latest: async () => (await sessions.list(owner, 1)).sessions[0],
    byPrefix: (prefix, limit) => sessions.byIdPrefix(owner, prefix, limit),
    idOf: (s) => s.id,
    describe: (s) => [s.project, s.title ?? s.actor].filter(Boolean).join(' · '),
    notFound: sessionNotFound,
  });
}

function sessionNotFound(id: string): AppError {
  return new AppError('NOT_FOUND', `Session ${id} was not found`, {
    details: { entity: 'session', id },
    hint: 'list your sessions with `agents session list`',
  });
}

function unknownContext(id: string): AppError {
  return new AppError('INVALID_PARAMS', `contextId ${id} is not available`, {
    fields: [
      { field: 'message.contextId', description: 'refers to a context you cannot use; omit it to start a new one' },
    ],
  });
}

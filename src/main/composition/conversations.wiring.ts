import type { ActorDefinition } from '../../domain/registry/actor.definition.ts';
import type { Session } from '../../domain/session.ts';
import { ChatToolbox } from '../../application/actors/llm/chat-toolbox.service.ts';
import { LlmActor } from '../../application/actors/llm/llm.actor.ts';
import type { LlmActorDeps } from '../../application/actors/llm/llm-actor.deps.ts';
import type { ContextService } from '../../application/context/context.service.ts';
import type { Logger } from '../../application/ports/logger.port.ts';
import type { Principal } from '../../application/ports/principal.ts';
import type { TurnAdmission } from '../../application/ports/quota.port.ts';
import type { SessionRepository } from '../../application/ports/session.repository.port.ts';
import type { StoredTask, TaskRepository } from '../../application/ports/task.repository.port.ts';
import { RegistryActorCatalog, type LlmActorFactory } from '../../application/registry/registry-actor.catalog.ts';
import type { RegistryService } from '../../application/registry/registry.service.ts';
import { CompactionService, type CompactionDeps } from '../../application/sessions/compaction.service.ts';
import { SessionContextService } from '../../application/sessions/session-context.service.ts';
import { ownedSession, SessionService } from '../../application/sessions/session.service.ts';
import { TurnHistoryService } from '../../application/sessions/turn-history.service.ts';
import type { RegistryParts } from './registry.wiring.ts';
import type { LlmDeps, ServiceDeps } from './service-deps.ts';

/** Chat sessions, their actors, their compaction and their turns' undo history. */
export interface Conversations {
  actors: RegistryActorCatalog;
  sessions: SessionService;
  compaction: CompactionService;
  turnHistory: TurnHistoryService;
  sessionContext: SessionContextService;
}

/**
 * Built in order: the actors' collaborators (compaction, the undo history) read sessions through
 * the session store, not through SessionService, which needs the actors — so nothing waits for a
 * service made later.
 */
export function buildConversations(
  deps: ServiceDeps,
  parts: RegistryParts,
  context: ContextService,
  admission: TurnAdmission,
): Conversations {
  const { registry, llm, hooks } = parts;
  const definitions = new ActorDefinitions(registry);
  const compaction = new CompactionService(new CompactionSources(deps, llm, definitions, admission));
  const turnHistory = new TurnHistoryService({ ...deps.turnHistory, sessions: deps.sessions, tasks: deps.tasks });
  const toolbox =
    llm &&
    new ChatToolbox({
      lookup: (kind, name) => registry.lookup(kind, name),
      use: (kind, name) => registry.use(kind, name),
      tools: deps.tools,
      mcp: llm.mcp,
      commandTimeoutMs: deps.commandTimeoutMs ?? 300_000,
    });
  const chat: LlmActorFactory | undefined =
    llm &&
    toolbox &&
    llmActorFactory({
      ...llm,
      toolbox,
      turnsOf: (contextId: string, limit: number): Promise<StoredTask[]> => deps.tasks.listByContext(contextId, limit),
      session: (id: string): Promise<Session | undefined> => deps.sessions.get(id),
      logger: deps.logger,
      context,
      compaction,
      lookupActor: definitions.of,
      hooks,
      checkpoints: turnHistory,
      mode: deps.trust?.mode ?? 'local',
      tracer: deps.tracer,
    });
  const actors = new RegistryActorCatalog(registry, deps.actorsByModel, chat);
  const sessions = new SessionService({
    changes: (id) => turnHistory.changesOf(id),
    sessions: deps.sessions,
    tasks: deps.tasks,
    transcripts: llm?.transcripts,
    actors,
    defaultActor: deps.defaultActor,
    checkEntity: (kind, name, principal) => checkSessionEntity(registry, kind, name, principal),
  });
  const sessionContext = new SessionContextService({
    sessions: deps.sessions,
    tasks: deps.tasks,
    actor: definitions.of,
    llm: llm && toolbox && { toolbox, tokens: llm.tokens, transcripts: llm.transcripts, context, compaction },
    logger: deps.logger,
  });
  return { actors, sessions, compaction, turnHistory, sessionContext };
}

/** LLM actors by name and definition, all sharing the chat's collaborators. */
function llmActorFactory(shared: LlmActorDeps): LlmActorFactory {
  return (name, definition) => new LlmActor(name, definition, shared);
}

/**
 * What a session may be bound to: visibility only (show would connect to a skill's MCP servers to
 * list their tools); a chat bound to a project edits its files, so the caller must be allowed to write them.
 */
async function checkSessionEntity(
  registry: RegistryService,
  kind: 'actor' | 'project' | 'skill',
  name: string,
  principal: Principal,
): Promise<void> {
  await registry.visible(kind, name, principal);
  if (kind === 'project') await registry.assertMayApplyInto([name], principal);
}

/** Actors' definitions by name, as the registry hands them out for use (fallbacks, summarisers). */
class ActorDefinitions {
  private readonly registry: RegistryService;

  constructor(registry: RegistryService) {
    this.registry = registry;
  }

  /** Bound: handed on as a function. */
  readonly of = async (name: string): Promise<ActorDefinition | undefined> =>
    (await this.registry.use('actor', name))?.definition;
}

/** What compaction reads: tasks, the model, actors' definitions, and the caller's session from the store. */
class CompactionSources implements CompactionDeps {
  readonly tasks: TaskRepository;
  readonly llm: CompactionDeps['llm'];
  readonly logger: Logger;
  readonly admission: TurnAdmission;
  private readonly sessions: SessionRepository;
  private readonly definitions: ActorDefinitions;

  constructor(deps: ServiceDeps, llm: LlmDeps | undefined, definitions: ActorDefinitions, admission: TurnAdmission) {
    this.tasks = deps.tasks;
    this.admission = admission;
    this.sessions = deps.sessions;
    this.logger = deps.logger;
    this.definitions = definitions;
    this.llm = llm && { models: llm.models, keys: llm.keys, tokens: llm.tokens, transcripts: llm.transcripts };
  }

  actor(name: string): Promise<ActorDefinition | undefined> {
    return this.definitions.of(name);
  }

  /** NOT_FOUND when it is not the caller's (as SessionService.get answers). */
  session(id: string, principal: Principal): Promise<Session> {
    return ownedSession(this.sessions, id, principal);
  }

  recordTask(sessionId: string, at: string): Promise<void> {
    return this.sessions.touch(sessionId, at, 1);
  }
}

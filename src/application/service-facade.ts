import { AppError } from '../domain/errors.ts';
import {
  BUILTIN_ACTIONS,
  BUILTIN_ACTOR_DEFINITIONS,
  BUILTIN_AUTOMATION_PROFILES,
  BUILTIN_TOOLS,
} from '../domain/registry/builtins.ts';
import { RetentionService } from './system/retention.service.ts';
import type { Actor, ActorCatalog } from './ports/actor.port.ts';
import type { Logger } from './ports/logger.port.ts';
import type { PushConfigRepository } from './ports/push-config.repository.port.ts';
import type { PushOutbox } from './ports/push-outbox.port.ts';
import type { PushScheduler } from './ports/push-scheduler.port.ts';
import {
  isOfKind,
  type NamespaceRepository,
  type RegistryRepository,
  type ResourceInspector,
} from './ports/registry.repository.port.ts';
import type { PlanRepository } from './ports/plan.repository.port.ts';
import type { SandboxManager, ToolRunner } from './ports/sandbox.port.ts';
import { PlanEngine } from './plans/plan-engine.ts';
import { PlanService } from './plans/plan.service.ts';
import { PlanAccess } from './plans/plan-access.ts';
import { PlanAnswers } from './plans/plan-answers.ts';
import { PlanCorrections } from './plans/plan-correction.ts';
import { PlanDrafts } from './plans/plan-draft.ts';
import { PlanHousekeeping } from './plans/plan-housekeeping.ts';
import { PlanQueries } from './plans/plan-queries.ts';
import { PlanRecorder } from './plans/plan-recorder.ts';
import { PlanRuns } from './plans/plan-runs.ts';
import type { SessionRepository } from './ports/session.repository.port.ts';
import type { SystemProbe } from './ports/system.port.ts';
import type { TaskRepository } from './ports/task.repository.port.ts';
import type { WebhookSender } from './ports/webhook.port.ts';
import type { EgressPolicy } from './ports/egress.port.ts';
import { systemPrincipalFor, type Principal } from './ports/principal.ts';
import { PushConfigService } from './push/push-config.service.ts';
import { PushNotifier, type PushNotifierOptions } from './push/push-notifier.ts';
import { NamespaceService, type UserDirectory } from './registry/namespace.service.ts';
import { RegistryActorCatalog } from './registry/registry-actor.catalog.ts';
import { RegistryService } from './registry/registry.service.ts';
import { CapabilityService, type TrustSettings } from './registry/capability.service.ts';
import type { CapabilityGrant, GrantRepository } from './ports/grant.repository.port.ts';
import { SessionService } from './sessions/session.service.ts';
import { CompactionService } from './sessions/compaction.service.ts';
import { TurnHistoryService } from './sessions/turn-history.service.ts';
import type { FileHistory } from './ports/file-history.port.ts';
import type { TurnChangeRepository } from './ports/turn-change.repository.port.ts';
import { HealthService } from './system/health.service.ts';
import { TaskService } from './tasks/task.service.ts';
import type { PayloadLimits } from '../domain/limits.ts';
import type { ApiKeys, LanguageModels, SchemaValidator, TokenCounter } from './ports/language-model.port.ts';
import type { McpHub } from './ports/mcp.port.ts';
import type { TranscriptStore } from './ports/transcript.port.ts';
import { ChatToolbox } from './actors/llm/chat-toolbox.ts';
import { LlmActor } from './actors/llm/llm.actor.ts';
import { actorChecks } from './actors/llm/actor-checks.ts';
import { grantedModels } from './actors/llm/granted-models.ts';
import { ContextService } from './context/context.service.ts';
import { AuditService } from './accounts/audit.service.ts';
import type { AuditLog } from './ports/audit.port.ts';
import type { JwtVerifier } from './ports/jwt-verifier.port.ts';
import { ApiKeyService } from './accounts/api-key.service.ts';
import { AuthenticationService } from './accounts/authentication.service.ts';
import { JwtSignIn } from './accounts/jwt-sign-in.ts';
import { UserService } from './accounts/user.service.ts';
import type { AccountRepository, KeyHasher } from './ports/account.repository.port.ts';
import type { FileInventory } from './ports/file-inventory.port.ts';
import type { RemoteConnectionStore, SyncRemoteFactory, SyncStateStore } from './ports/sync.port.ts';
import { SyncService } from './sync/sync.service.ts';
import { HookService } from './hooks/hook.service.ts';
import type { HookRunner } from './ports/hook-runner.port.ts';
import { namespaceOf } from '../domain/registry/names.ts';
import type { SecretService } from './secrets/secret.service.ts';

export interface FacadeDeps {
  tasks: TaskRepository;
  sessions: SessionRepository;
  pushConfigs: PushConfigRepository;
  /** Pending push deliveries (durable: kept across restarts). */
  pushOutbox: PushOutbox;
  registry: RegistryRepository;
  namespaces: NamespaceRepository;
  inspector: ResourceInspector;
  plans: PlanRepository;
  sandboxes: SandboxManager;
  tools: ToolRunner;
  /** Default time limit of a command a plan runs (ms). */
  commandTimeoutMs?: number;
  webhooks: WebhookSender;
  /**
   * Declare-time check of outbound URLs: push configs' webhooks here; the registry's `baseUrl`,
   * MCP `url` and hook `url` where the namespace lacks the private-network capability.
   */
  egress: EgressPolicy;
  probe: SystemProbe;
  /** The deterministic actors by model name (`echo`, `conformance`). */
  actorsByModel: ReadonlyMap<string, Actor>;
  logger: Logger;
  version: string;
  defaultActor: string;
  push?: PushNotifierOptions;
  /** Where push deliveries are drained (default: in this process; several instances: PgBossPushScheduler). */
  pushScheduler?: PushScheduler | undefined;
  /** What a client may send (defaults: DEFAULT_LIMITS). */
  limits?: PayloadLimits;
  /** LLM providers and MCP servers (absent: LLM actors are refused). */
  llm?: LlmDeps;
  /** What the context service reads files with, and counts their tokens with. */
  context: { inventory: FileInventory; tokens: TokenCounter };
  /** The persistent audit log of security-relevant events. */
  audit: AuditLog;
  /** Verifies bearer JWTs of the configured OIDC issuer (absent: no OIDC, JWTs are refused). */
  jwt?: JwtVerifier | undefined;
  /** Server mode: the accounts namespace members are chosen from (absent in local mode: no other users). */
  users?: UserDirectory | undefined;
  /** Sync with a server (a local setup): the sync_state table, the connection record, and the server client. */
  sync?: { state: SyncStateStore; connection: RemoteConnectionStore; remotes: SyncRemoteFactory };
  /** Server-mode users and API keys (with the slow hash of their secrets). */
  accounts: { repo: AccountRepository; hasher: KeyHasher };
  /** Runs hooks' commands and webhooks (absent: registered hooks do not run). */
  hookRunner?: HookRunner | undefined;
  /** Local or server mode, and a server's workspaces (default: local mode, which holds every capability). */
  trust?: TrustSettings | undefined;
  /** Capabilities server administrators granted namespaces (absent: none granted). */
  grants?: GrantRepository | undefined;
  /** The capability service, when the composition root made it for other parts too (else made here). */
  capabilities?: CapabilityService | undefined;
  /**
   * Namespaces' secrets. Built before the facade (by the composition root) because the API keys
   * of `llm` read actors' secrets through it.
   */
  secrets: SecretService;
  /** The undo history of chat turns: the shadow history of project files and the turns' records. */
  turnHistory: { files: FileHistory; records: TurnChangeRepository };
}

/** What LLM actors need besides the stores the facade already has. */
export interface LlmDeps {
  models: LanguageModels;
  keys: ApiKeys;
  tokens: TokenCounter;
  validator: SchemaValidator;
  mcp: McpHub;
  transcripts: TranscriptStore;
}

/** The Application layer's single entry point: everything a protocol endpoint may call. */
export interface ServiceFacade {
  readonly tasks: TaskService;
  readonly sessions: SessionService;
  /** Long sessions: their older turns summarised (automatically by LLM turns, or on demand). */
  readonly compaction: CompactionService;
  /** What chat turns changed in project files, and their undo (also the agent loop's TurnCheckpoints). */
  readonly turnHistory: TurnHistoryService;
  readonly push: PushConfigService;
  readonly notifier: PushNotifier;
  readonly health: HealthService;
  readonly actors: ActorCatalog;
  readonly registry: RegistryService;
  readonly namespaces: NamespaceService;
  /** What each namespace may make the server do: grants, checks at declaration and at use. */
  readonly capabilities: CapabilityService;
  /** The plan lifecycle: use, execute, apply, prompt, rollback, cancel. */
  readonly plans: PlanService;
  /** The plans' read side: status, tree, explain, diff, artifacts, list. */
  readonly planQueries: PlanQueries;
  /** Answers to what a plan waits for: approve, reject (and a message on the waiting task). */
  readonly planAnswers: PlanAnswers;
  /** Corrections of a plan's decisions (`plan correct`). */
  readonly planCorrections: PlanCorrections;
  /** Rebase, delete and prune of plans with their sandboxes. */
  readonly planHousekeeping: PlanHousekeeping;
  readonly retention: RetentionService;
  /** What an actor sees of a project's files (`_cleveragents/context/…`). */
  readonly context: ContextService;
  /** Security-relevant events: logins, keys, roles, refused requests. */
  readonly audit: AuditService;
  /** Sync of shared registry definitions between this local store and a server. */
  readonly sync: SyncService;
  /** Server mode: credentials (API keys, the server token, OIDC JWTs) into principals. */
  readonly authentication: AuthenticationService;
  /** Server-mode users (`whoami` too, in both modes), and the bootstrap administrator's server token. */
  readonly users: UserService;
  /** Server-mode API keys. */
  readonly keys: ApiKeyService;
  /** Namespaces' secrets (`_cleveragents/secret/…`): set, listed by name, removed; never returned. */
  readonly secrets: SecretService;
  /** Deletes a session with its tasks (running ones are cancelled first). */
  deleteSession(id: string, principal: Principal): Promise<{ deleted: true; tasksDeleted: number }>;
}

/** Without sync stores (tests, servers): not connected, and connecting is refused. */
const NO_SYNC: NonNullable<FacadeDeps['sync']> = {
  state: { list: () => Promise.resolve([]), put: () => Promise.resolve(), clear: () => Promise.resolve(0) },
  connection: {
    get: () => Promise.resolve(undefined),
    set: () => Promise.reject(new AppError('UNSUPPORTED_OPERATION', 'this agent keeps no sync connection')),
    clear: () => Promise.resolve(false),
  },
  remotes: () => {
    throw new AppError('UNSUPPORTED_OPERATION', 'this agent cannot reach a server', {
      hint: 'sync runs in a local setup: agents server connect URL',
    });
  },
};

/** No grants, and none can be made (local mode needs none; a server wires its store). */
const NO_GRANTS: GrantRepository = {
  list: () => Promise.resolve<CapabilityGrant[]>([]),
  put: () => Promise.reject(new AppError('UNSUPPORTED_OPERATION', 'this agent keeps no capability grants')),
  remove: () => Promise.resolve(false),
};

export function createServiceFacade(deps: FacadeDeps): ServiceFacade {
  let registry: RegistryService | undefined;
  const audit = new AuditService(deps.audit, deps.logger);
  let planAccess: PlanAccess | undefined;
  let planHousekeeping: PlanHousekeeping | undefined;
  let engine: PlanEngine | undefined;
  let deleteSession: ServiceFacade['deleteSession'] | undefined;
  const namespaces = new NamespaceService(deps.namespaces, deps.registry, () => registry?.builtinCounts() ?? {}, {
    users: deps.users,
    audit,
    work: {
      async runningPlans(namespace) {
        const running = engine?.running;
        return running ? (await deps.plans.list({ owner: namespace })).filter((p) => running.has(p.id)).length : 0;
      },
      // Plans with their sandboxes and branches, sessions with their tasks (running ones cancelled).
      async clear(namespace) {
        const principal = systemPrincipalFor(namespace);
        for (const p of await deps.plans.list({ owner: namespace }))
          await planHousekeeping?.delete(p.id, { force: true }, principal);
        const seen = new Set<string>();
        for (;;) {
          const page = await deps.sessions.list(namespace, 100);
          const fresh = page.sessions.filter((s) => !seen.has(s.id));
          if (fresh.length === 0 || !deleteSession) break;
          for (const session of fresh) {
            seen.add(session.id);
            await deleteSession(session.id, principal);
          }
        }
      },
    },
  });
  const capabilities =
    deps.capabilities ??
    new CapabilityService({
      grants: deps.grants ?? NO_GRANTS,
      inspector: deps.inspector,
      settings: deps.trust ?? { mode: 'local' },
      egress: deps.trust?.mode === 'server' ? deps.egress : undefined,
      namespaceExists: async (name) => (await deps.namespaces.get(name)) !== undefined,
      audit,
    });
  // Every model request goes out as its actor's namespace's grants allow (private addresses).
  const llm = deps.llm && { ...deps.llm, models: grantedModels(deps.llm.models, capabilities) };
  registry = new RegistryService({
    repo: deps.registry,
    namespaces,
    capabilities,
    inspector: deps.inspector,
    builtins: {
      actor: BUILTIN_ACTOR_DEFINITIONS,
      tool: BUILTIN_TOOLS,
      action: BUILTIN_ACTIONS,
      'automation-profile': BUILTIN_AUTOMATION_PROFILES,
    },
    builtinModels: [...deps.actorsByModel.keys()],
    llm: deps.llm && { keys: deps.llm.keys, mcp: deps.llm.mcp },
  });
  const hookRunner = deps.hookRunner;
  const hooks =
    hookRunner &&
    new HookService({
      hooksOf: async (namespace) =>
        (await deps.registry.list({ kind: 'hook', namespaces: [namespace] }))
          .filter((e) => isOfKind(e, 'hook'))
          .map((e) => e.definition),
      projectNetwork: async (name) => {
        const project = await deps.registry.get('project', name);
        return project && isOfKind(project, 'project') ? project.definition.settings?.network : undefined;
      },
      runner: hookRunner,
      logger: deps.logger,
      privateNetwork: (hook) => capabilities.holds(namespaceOf(hook.name), 'private-network'),
      refusal: (hook) =>
        capabilities
          .assertUsable({ kind: 'hook', name: hook.name, namespace: namespaceOf(hook.name), definition: hook })
          .then(
            () => undefined,
            (err: Error) => err.message,
          ),
    });
  // What every actor sees of a project: plans' strategy and execution actors, project-bound chats.
  const context = new ContextService({
    registry,
    inventory: deps.context.inventory,
    tokens: deps.context.tokens,
    plans: {
      async get(planId, principal) {
        if (!planAccess) throw new Error('the plan service is not ready');
        // The plan and its decisions only: its status would read every record of it.
        const plan = await planAccess.get(planId, principal);
        return { ...plan, decisions: await deps.plans.decisions(planId) };
      },
    },
  });
  const planRecorder = new PlanRecorder({
    plans: deps.plans,
    sandboxes: deps.sandboxes,
    redactHostPaths: (text, namespace) => registry.redactHostPaths(text, namespace),
    hooks,
    logger: deps.logger,
  });
  engine = new PlanEngine({
    recorder: planRecorder,
    plans: deps.plans,
    registry,
    sandboxes: deps.sandboxes,
    tools: deps.tools,
    logger: deps.logger,
    commandTimeoutMs: deps.commandTimeoutMs,
    hooks,
    llm: llm && {
      models: llm.models,
      keys: llm.keys,
      tokens: llm.tokens,
      validator: llm.validator,
      transcripts: llm.transcripts,
      context,
    },
  });
  let sessions: SessionService | undefined;
  const reg = registry;
  const toolbox =
    llm &&
    new ChatToolbox({
      lookup: (k, n) => reg.lookup(k, n),
      use: (k, n) => reg.use(k, n),
      tools: deps.tools,
      mcp: llm.mcp,
      commandTimeoutMs: deps.commandTimeoutMs ?? 300_000,
    });
  const compaction = new CompactionService({
    tasks: deps.tasks,
    llm: llm && { models: llm.models, keys: llm.keys, tokens: llm.tokens, transcripts: llm.transcripts },
    actor: async (name) => (await reg.use('actor', name))?.definition,
    session: (id, principal) => {
      if (!sessions) throw new Error('the session service is not ready');
      return sessions.get(id, principal);
    },
    recordTask: (id, at) => deps.sessions.touch(id, at, 1),
    logger: deps.logger,
  });
  const turnHistory = new TurnHistoryService({ ...deps.turnHistory, sessions: deps.sessions, tasks: deps.tasks });
  const actors = new RegistryActorCatalog(
    registry,
    deps.actorsByModel,
    llm &&
      toolbox &&
      ((name, def) =>
        new LlmActor(name, def, {
          ...llm,
          toolbox,
          turnsOf: (contextId, limit) => deps.tasks.listByContext(contextId, limit),
          session: (id) => sessions?.find(id) ?? Promise.resolve(undefined),
          logger: deps.logger,
          context,
          compaction,
          lookupActor: async (n) => (await reg.use('actor', n))?.definition,
          hooks,
          checkpoints: turnHistory,
        })),
  );
  sessions = new SessionService({
    changes: (id) => turnHistory.changesOf(id),
    sessions: deps.sessions,
    tasks: deps.tasks,
    transcripts: llm?.transcripts,
    actors,
    defaultActor: deps.defaultActor,
    // Visibility only: show would connect to a skill's MCP servers to list their tools.
    checkEntity: async (kind, name, principal) => {
      await reg.visible(kind, name, principal);
      // A chat bound to a project edits its files: the caller must be allowed to write them.
      if (kind === 'project') await reg.assertMayApplyInto([name], principal);
    },
  });
  const tasks = new TaskService({ tasks: deps.tasks, sessions, actors, logger: deps.logger, limits: deps.limits });
  let notifier: PushNotifier | undefined;
  const push = new PushConfigService(deps.pushConfigs, tasks, deps.egress, (taskId) => notifier?.invalidate(taskId));
  tasks.acceptInlinePush(push);
  notifier = new PushNotifier((taskId) => push.forDelivery(taskId), deps.pushOutbox, deps.webhooks, deps.logger, {
    ...deps.push,
    scheduler: deps.pushScheduler ?? deps.push?.scheduler,
  });
  const n = notifier;
  tasks.tapRecording((taskId, item) => n.recording(taskId, item));
  tasks.tap((task, _owner, item) => n.notify(task, item));
  const health = new HealthService(
    deps.probe,
    deps.version,
    () => tasks.liveCount,
    llm &&
      (async (principal) => {
        const page = await reg.list('actor', { pageSize: 500 }, principal);
        return actorChecks(
          page.items.map((e) => ({ name: e.name, definition: e.definition })),
          llm.models,
          llm.keys,
        );
      }),
  );
  // Plans run their phases on tasks of their own contexts: no actor runs there, nobody chats there.
  const planDeps = { plans: deps.plans, registry, tasks, engine, recorder: planRecorder, sandboxes: deps.sandboxes };
  planAccess = new PlanAccess(planDeps);
  const planQueries = new PlanQueries(planDeps, planAccess);
  const planAnswers = new PlanAnswers(planDeps, planAccess, planQueries);
  const planRuns = new PlanRuns(planDeps, planQueries);
  const planCorrections = new PlanCorrections(planDeps, planAccess, planAnswers, planRuns);
  planHousekeeping = new PlanHousekeeping(planDeps, planAccess, planQueries);
  const plans = new PlanService(planDeps, {
    access: planAccess,
    queries: planQueries,
    answers: planAnswers,
    housekeeping: planHousekeeping,
    runs: planRuns,
    drafts: new PlanDrafts(planDeps),
  });
  tasks.addContextOwner(planAnswers);
  deleteSession = async (id, principal) => {
    await sessions.get(id, principal);
    const tasksDeleted = await tasks.purgeContext(id);
    await turnHistory.forget(id);
    await sessions.delete(id);
    return { deleted: true, tasksDeleted };
  };
  const { repo: accounts, hasher } = deps.accounts;
  const authentication = new AuthenticationService({
    accounts,
    hasher,
    audit,
    logger: deps.logger,
    jwt:
      deps.jwt && new JwtSignIn({ jwt: deps.jwt, accounts, namespaces: deps.namespaces, audit, logger: deps.logger }),
  });
  return {
    tasks,
    sessions,
    compaction,
    turnHistory,
    push,
    notifier: n,
    health,
    actors,
    registry,
    namespaces,
    capabilities,
    plans,
    planQueries,
    planAnswers,
    planCorrections,
    planHousekeeping,
    context,
    audit,
    sync: new SyncService({
      registry,
      namespaces,
      namespaceRepo: deps.namespaces,
      inspector: deps.inspector,
      logger: deps.logger,
      ...(deps.sync ?? NO_SYNC),
    }),
    authentication,
    users: new UserService({ accounts, hasher, audit }),
    keys: new ApiKeyService({ accounts, hasher, audit, verified: authentication }),
    secrets: deps.secrets,
    retention: new RetentionService({
      tasks: deps.tasks,
      sessions: deps.sessions,
      isLive: (id) => tasks.isLive(id),
      logger: deps.logger,
    }),
    deleteSession,
  };
}

import type { AuditService } from './accounts/audit.service.ts';
import type { QuotaService } from './accounts/quota.service.ts';
import type { ApiKeyService } from './accounts/api-key.service.ts';
import type { AuthenticationService } from './accounts/authentication.service.ts';
import type { UserService } from './accounts/user.service.ts';
import type { ContextService } from './context/context.service.ts';
import type { PlanAnswers } from './plans/plan-answers.service.ts';
import type { PlanCorrections } from './plans/plan-corrections.service.ts';
import type { PlanHousekeeping } from './plans/plan-housekeeping.service.ts';
import type { PlanQueries } from './plans/plan-queries.service.ts';
import type { PlanService } from './plans/plan.service.ts';
import type { ActorCatalog } from './ports/actor.port.ts';
import type { Principal } from './ports/principal.ts';
import type { PushConfigService } from './push/push-config.service.ts';
import type { PushNotifier } from './push/push-notifier.service.ts';
import type { CapabilityService } from './registry/capability.service.ts';
import type { NamespaceService } from './registry/namespace.service.ts';
import type { RegistryService } from './registry/registry.service.ts';
import type { SecretService } from './secrets/secret.service.ts';
import type { CompactionService } from './sessions/compaction.service.ts';
import type { SessionService } from './sessions/session.service.ts';
import type { TurnHistoryService } from './sessions/turn-history.service.ts';
import type { SessionContextService } from './sessions/session-context.service.ts';
import type { SyncService } from './sync/sync.service.ts';
import type { HealthService } from './system/health.service.ts';
import type { RetentionService } from './system/retention.service.ts';
import type { TaskService } from './tasks/task.service.ts';

/**
 * The Application layer's single entry point: everything a protocol endpoint may call. Built by
 * the composition root (src/main/composition), which alone knows how the services are made.
 */
export interface ServiceFacade {
  readonly tasks: TaskService;
  readonly sessions: SessionService;
  /** Long sessions: their older turns summarised (automatically by LLM turns, or on demand). */
  readonly compaction: CompactionService;
  /** What chat turns changed in project files, and their undo (also the agent loop's TurnCheckpoints). */
  readonly turnHistory: TurnHistoryService;
  /** What a session's next turn would send to its model (`session/context`), nothing sent. */
  readonly sessionContext: SessionContextService;
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
  /** Per-user limits (server mode): requests per minute, concurrent turns, tokens per day; namespaces' overrides. */
  readonly quota: QuotaService;
  /** Namespaces' secrets (`_cleveragents/secret/…`): set, listed by name, removed; never returned. */
  readonly secrets: SecretService;
  /** Deletes a session with its tasks (running ones are cancelled first). */
  deleteSession(id: string, principal: Principal): Promise<{ deleted: true; tasksDeleted: number }>;
}

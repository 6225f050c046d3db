import type { UsageLimits } from '../../domain/quota.ts';
import type { NamespaceLimitsRepository, UsageCounter, UsageLedger } from '../../application/ports/quota.port.ts';
import { AppError } from '../../domain/errors.ts';
import type { Tracer } from '../../application/ports/tracer.port.ts';
import type { PayloadLimits } from '../../domain/limits.ts';
import type { AccountRepository, KeyHasher } from '../../application/ports/account.repository.port.ts';
import type { Actor } from '../../application/ports/actor.port.ts';
import type { AuditLog } from '../../application/ports/audit.port.ts';
import type { EgressPolicy } from '../../application/ports/egress.port.ts';
import type { FileHistory } from '../../application/ports/file-history.port.ts';
import type { FileInventory } from '../../application/ports/file-inventory.port.ts';
import type { CapabilityGrant, GrantRepository } from '../../application/ports/grant.repository.port.ts';
import type { HookRunner } from '../../application/ports/hook-runner.port.ts';
import type { JwtVerifier } from '../../application/ports/jwt-verifier.port.ts';
import type {
  ApiKeys,
  LanguageModels,
  SchemaValidator,
  TokenCounter,
} from '../../application/ports/language-model.port.ts';
import type { Logger } from '../../application/ports/logger.port.ts';
import type { McpHub } from '../../application/ports/mcp.port.ts';
import type { PlanRepository } from '../../application/ports/plan.repository.port.ts';
import type { PushConfigRepository } from '../../application/ports/push-config.repository.port.ts';
import type { PushOutbox } from '../../application/ports/push-outbox.port.ts';
import type { PushScheduler } from '../../application/ports/push-scheduler.port.ts';
import type {
  NamespaceRepository,
  RegistryRepository,
  ResourceInspector,
} from '../../application/ports/registry.repository.port.ts';
import type { SandboxManager, ToolRunner } from '../../application/ports/sandbox.port.ts';
import type { SessionRepository } from '../../application/ports/session.repository.port.ts';
import type { RemoteConnectionStore, SyncRemoteFactory, SyncStateStore } from '../../application/ports/sync.port.ts';
import type { SystemProbe } from '../../application/ports/system.port.ts';
import type { TaskRepository } from '../../application/ports/task.repository.port.ts';
import type { TranscriptStore } from '../../application/ports/transcript.port.ts';
import type { TurnChangeRepository } from '../../application/ports/turn-change.repository.port.ts';
import type { WebhookSender } from '../../application/ports/webhook.port.ts';
import type { PushNotifierOptions } from '../../application/push/push-notifier.service.ts';
import type { CapabilityService, TrustSettings } from '../../application/registry/capability.service.ts';
import type { UserDirectory } from '../../application/registry/namespace.service.ts';
import type { SecretService } from '../../application/secrets/secret.service.ts';

/** What the services are made from: the stores and adapters the composition root opened. */
export interface ServiceDeps {
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
  /**
   * Per-user limits: the server's defaults (all 0, none, in local mode), and where usage is counted
   * (and, on a server, each model step's tokens recorded) and namespaces' overrides are kept.
   */
  quota: {
    defaults: UsageLimits;
    store: UsageCounter & UsageLedger & NamespaceLimitsRepository;
    mode: 'local' | 'server';
  };
  /** Server-mode users and API keys (with the slow hash of their secrets). */
  accounts: { repo: AccountRepository; hasher: KeyHasher };
  /** Runs hooks' commands and webhooks (absent: registered hooks do not run). */
  hookRunner?: HookRunner | undefined;
  /** Local or server mode, and a server's workspaces (default: local mode, which holds every capability). */
  trust?: TrustSettings | undefined;
  /** Capabilities server administrators granted namespaces (absent: none granted). */
  grants?: GrantRepository | undefined;
  /** Spans for turns, model calls and tool calls (absent: tracing off). */
  tracer?: Tracer | undefined;
  /** The capability service, when the composition root made it for other parts too (else made with the registry). */
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

/** Without sync stores (tests, servers): not connected, and connecting is refused. */
export const NO_SYNC: NonNullable<ServiceDeps['sync']> = {
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
export const NO_GRANTS: GrantRepository = {
  list: () => Promise.resolve<CapabilityGrant[]>([]),
  put: () => Promise.reject(new AppError('UNSUPPORTED_OPERATION', 'this agent keeps no capability grants')),
  remove: () => Promise.resolve(false),
};

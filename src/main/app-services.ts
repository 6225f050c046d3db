/** The services' stores and adapters, as `buildApp` opens them (see composition/ for how the services are made). */
import { join } from 'node:path';
import type { CapabilityService, JwtVerifier, Logger, SecretService, Tracer } from '../application/index.ts';
import {
  AiSdkLanguageModels,
  AjvSchemaValidator,
  BuiltinToolRunner,
  EnvFileApiKeys,
  FileRemoteConnectionStore,
  FsFileInventory,
  GitRemotes,
  GitSandboxManager,
  GptTokenCounter,
  HostSystemProbe,
  JoseJwtVerifier,
  LocalHookRunner,
  ScryptKeyHasher,
  ShadowHistory,
  type CommandConfinement,
  type EgressGuard,
  type OidcDiscovery,
  type Storage,
} from '../infrastructure/index.ts';
import type { PayloadLimits } from '../domain/limits.ts';
import type { UsageLimits } from '../domain/quota.ts';
import type { Actor } from '../application/ports/actor.port.ts';
import type { LlmDeps, ServiceDeps } from './composition/index.ts';
import { envInt } from './limits-config.ts';
import { workspaceRootOf } from './paths.ts';
import type { OidcOptions } from './oidc-wiring.ts';
import { httpSyncRemote } from './sync-remote.ts';
import type { wireTrust } from './trust-wiring.ts';
import { VERSION } from './version.ts';

/** What `buildApp` opened before the services are made. */
export interface OpenedParts {
  options: {
    dataDir: string;
    tokenFile?: string | undefined;
    env?: NodeJS.ProcessEnv;
    llmRetryBaseMs?: number;
    tracer?: Tracer | undefined;
  };
  /** Server mode (bearer authentication). */
  server: boolean;
  storage: Storage;
  confinement: Promise<CommandConfinement>;
  trust: ReturnType<typeof wireTrust>;
  sandboxes: GitSandboxManager;
  secrets: SecretService;
  jwt: JwtVerifier | undefined;
  actorsByModel: ReadonlyMap<string, Actor>;
  defaultActor: string;
  limits: PayloadLimits;
  /** The server's default per-user limits (none in local mode). */
  usageLimits: UsageLimits;
  logger: Logger;
}

/** The services' dependencies: the stores of `storage` and the host's adapters. */
export function serviceDepsOf(o: OpenedParts): ServiceDeps {
  const { storage, confinement, trust, logger } = o;
  const { egress, webhooks, inspector, capabilities } = trust;
  const accounts = storage.accounts;
  const tokens = new GptTokenCounter();
  return {
    tasks: storage.tasks,
    sessions: storage.sessions,
    pushConfigs: storage.pushConfigs,
    pushOutbox: storage.pushOutbox,
    pushScheduler: storage.pushScheduler,
    registry: storage.registry,
    namespaces: storage.namespaces,
    plans: storage.plans,
    inspector,
    sandboxes: o.sandboxes,
    tools: new BuiltinToolRunner({ confinement }),
    webhooks,
    egress,
    // Hook commands run confined like every command; hook webhooks pass the egress guard.
    hookRunner: new LocalHookRunner({ confinement, egress }),
    probe: new HostSystemProbe({
      storage,
      dataDir: o.options.dataDir,
      version: VERSION,
      tokenFile: o.options.tokenFile,
      confinement,
    }),
    actorsByModel: o.actorsByModel,
    logger,
    version: VERSION,
    defaultActor: o.defaultActor,
    limits: o.limits,
    tracer: o.options.tracer,
    llm: llmDepsOf(o, tokens),
    context: { inventory: new FsFileInventory(), tokens },
    audit: storage.audit,
    jwt: o.jwt,
    // A local setup syncs with the server `agents server connect` named (a server refuses sync).
    sync: {
      state: storage.syncState,
      connection: new FileRemoteConnectionStore(o.options.dataDir),
      remotes: httpSyncRemote,
    },
    accounts: { repo: accounts, hasher: new ScryptKeyHasher() },
    quota: { defaults: o.usageLimits, store: storage.quota, mode: o.server ? 'server' : 'local' },
    capabilities,
    secrets: o.secrets,
    // Chat turns' undo: snapshots of project directories in `<data dir>/shadow`, records in storage.
    turnHistory: {
      files: new ShadowHistory({ base: join(o.options.dataDir, 'shadow') }),
      records: storage.turnChanges,
    },
    // Server mode: namespace members are chosen among its users (local mode has one user).
    ...(o.server ? { users: { exists: async (n: string) => (await accounts.getUser(n)) !== undefined } } : {}),
  };
}

/** LLM providers and MCP servers; `tokens` is shared with the context service. */
function llmDepsOf(o: OpenedParts, tokens: GptTokenCounter): LlmDeps {
  const retryBaseMs = o.options.llmRetryBaseMs ?? envInt('CLEVERAGENTS_LLM_RETRY_BASE_MS', 0, 60_000);
  return {
    models: new AiSdkLanguageModels({
      ...(retryBaseMs !== undefined ? { retryBaseMs } : {}),
      ...(o.server ? { guard: o.trust.egress } : {}),
    }),
    // An actor's apiKeySecret is read from the secrets of the actor's own namespace.
    keys: new EnvFileApiKeys({ env: o.options.env ?? process.env, secret: (ns, name) => o.secrets.reveal(ns, name) }),
    tokens,
    validator: new AjvSchemaValidator(),
    mcp: o.trust.mcp,
    transcripts: o.storage.transcripts,
  };
}

/** The JWT verifier of the configured OIDC issuer (absent without OIDC). */
export function jwtVerifierOf(
  oidc: OidcOptions | undefined,
  discovered: OidcDiscovery | undefined,
): JwtVerifier | undefined {
  if (!oidc) return undefined;
  return new JoseJwtVerifier({
    issuer: oidc.issuer,
    audience: oidc.audience,
    // Without discovery the verifier reads it on first use (and again after a failure).
    jwksUri: discovered?.jwksUri,
    userClaim: oidc.userClaim,
    rolesClaim: oidc.rolesClaim,
    cooldownMs: oidc.jwksCooldownMs,
    maxLifetimeSec: oidc.maxTokenLifetimeSec,
  });
}

/**
 * git-remote clones: on a server in each namespace's workspace (`<workspace>/.remotes`), every
 * connection through the egress guard unless the namespace holds private-network; in local mode under the data directory, unguarded like the
 * rest of the user's own machine. Credentials are secrets of the resource's namespace.
 */
export function gitRemotesOf(o: {
  server: boolean;
  dataDir: string;
  workspaceRoot: string | undefined;
  egress: EgressGuard;
  secrets: Pick<SecretService, 'reveal'>;
  capabilities: Pick<CapabilityService, 'holds'>;
}): GitRemotes {
  const workspaces = workspaceRootOf(o.workspaceRoot, o.dataDir);
  return new GitRemotes({
    dirOf: (ns) => (o.server ? join(workspaces, ns, '.remotes') : join(o.dataDir, 'remotes', ns)),
    secret: (ns, name) => o.secrets.reveal(ns, name),
    ...(o.server
      ? { egress: o.egress, privateNetwork: (ns: string) => o.capabilities.holds(ns, 'private-network') }
      : {}),
  });
}

/** The sandboxes' git runs in the commands' confinement; applies a crash interrupted are finished first. */
export async function openSandboxes(
  dataDir: string,
  confinement: Promise<CommandConfinement>,
  logger: Logger,
  remotes?: GitRemotes,
): Promise<GitSandboxManager> {
  const sandboxes = new GitSandboxManager({ root: join(dataDir, 'sandboxes'), confinement, remotes });
  const recovered = await sandboxes.recoverApplies().catch((err: unknown) => {
    logger.error({ err }, 'recovering interrupted applies failed');
    return [];
  });
  for (const r of recovered) logger.warn({ ...r }, `an interrupted apply was ${r.outcome}: ${r.detail}`);
  return sandboxes;
}

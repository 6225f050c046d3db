import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import {
  AuditService,
  CapabilityService,
  builtinActorsByModel,
  createServiceFacade,
  settleStrandedWork,
  type JwtVerifier,
  type Logger,
  type ServiceFacade,
} from '../application/index.js';
import {
  AiSdkLanguageModels,
  AjvSchemaValidator,
  BuiltinToolRunner,
  CommandConfinement,
  EnvFileApiKeys,
  FsFileInventory,
  GptTokenCounter,
  SdkMcpHub,
  FileRemoteConnectionStore,
  ScryptKeyHasher,
  FsResourceInspector,
  type ConfinementSettings,
  maskedPaths,
  readOnlyPathProblem,
  GitSandboxManager,
  EgressGuard,
  HttpWebhookSender,
  HostSystemProbe,
  LocalHookRunner,
  openSqliteStorage,
  openPgStorage,
  type Storage,
  discoverOidc,
  JoseJwtVerifier,
  oidcMetadataUrl,
  type OidcDiscovery,
} from '../infrastructure/index.js';
import { AgentCardProvider, type AgentCardOptions, type CardOidc } from '../protocol/a2a/agent-card.js';
import { DEFAULT_LIMITS, type PayloadLimits } from '../domain/limits.js';
import { buildMethodTable } from '../protocol/a2a/method-table.js';
import { TickBatchedDestination } from './log-destination.js';
import { Dispatcher } from '../protocol/server/dispatcher.js';
import { envInt } from './limits-config.js';
import { egressSettings } from './egress-config.js';
import { configDir, databaseFile, secretKeyFile, tokenFile } from './paths.js';
import { openSecrets } from './secrets.js';
import { StartupError } from './startup-errors.js';
import { httpSyncRemote } from './sync-remote.js';
import { VERSION } from './version.js';

export interface AppOptions {
  dataDir: string;
  /** Use an in-memory database (tests). */
  inMemory?: boolean;
  defaultActor?: string | undefined;
  logger?: Logger;
  card: Omit<AgentCardOptions, 'name' | 'description' | 'version' | 'pushNotifications'>;
  tokenFile?: string | undefined;
  validateResults?: boolean;
  /**
   * `--allow-egress` entries (HOST or HOST:PORT): hosts outbound requests may reach even when they
   * are, or resolve to, internal addresses. CLEVERAGENTS_ALLOW_EGRESS (and the deprecated
   * CLEVERAGENTS_PUSH_ALLOW_HOSTS) add to them.
   */
  allowEgress?: readonly string[];
  conformanceStepMs?: number;
  /** What a client may send (missing ones: DEFAULT_LIMITS). */
  limits?: Partial<PayloadLimits>;
  /** How long a write waits for another process's database lock (default 5 s). */
  busyTimeoutMs?: number;
  /** How long a runner lease lasts without renewal (default 15 s; CLEVERAGENTS_RUNNER_LEASE_MS). */
  runnerLeaseMs?: number;
  /**
   * A PostgreSQL URL (`postgres://…`): every store lives there and several instances may share it
   * (CLEVERAGENTS_DATABASE_URL). Without it the embedded SQLite file in the data directory is used.
   */
  databaseUrl?: string | undefined;
  /** PostgreSQL connections per instance (default 10; CLEVERAGENTS_DATABASE_POOL). */
  databasePoolSize?: number | undefined;
  /** How commands are confined (default: the environment, see `confinementSettings`). */
  confinement?: {
    mode?: 'bubblewrap' | 'none';
    bwrapPath?: string;
    /** Toolchain directories commands see read-only (`--read-only-path`; the environment's add up). */
    readOnlyPaths?: readonly string[] | undefined;
  };
  /** Where actors' API keys come from (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** First wait before an LLM request is retried (ms; default 1000). */
  llmRetryBaseMs?: number;
  /** Server mode: accept JWTs of this OpenID Connect issuer and declare its device login on the card. */
  oidc?: OidcOptions | undefined;
  /** Server mode: where each namespace's workspace is (`<workspaceRoot>/<namespace>`). */
  workspaceRoot?: string | undefined;
  /** The key that seals namespaces' secrets (default: CLEVERAGENTS_SECRET_KEY_FILE, else `<data dir>/secret.key`). */
  secretKeyFile?: string | undefined;
}

/** The OIDC settings of `agents serve` (flags or CLEVERAGENTS_OIDC_*). */
export interface OidcOptions {
  issuer: string;
  audience: string;
  /** The OAuth client id the CLI's device login uses (announced on the card). */
  clientId?: string | undefined;
  /** The claim naming the user (default preferred_username, then sub). */
  userClaim?: string | undefined;
  /** The claim carrying namespace roles. */
  rolesClaim?: string | undefined;
  /** How long discovery may take at start (ms; default 3000). */
  discoveryTimeoutMs?: number | undefined;
  /** How long to wait before discovery is tried again after a failure (ms; default 30 s). */
  discoveryRetryMs?: number | undefined;
  /** JWKS refetch cooldown for an unknown kid (ms; default 30 s). */
  jwksCooldownMs?: number | undefined;
  /** The longest a JWT may be valid (s; default 24 h, CLEVERAGENTS_OIDC_MAX_TOKEN_LIFETIME_SECONDS). */
  maxTokenLifetimeSec?: number | undefined;
}

export interface App {
  facade: ServiceFacade;
  dispatcher: Dispatcher;
  card: AgentCardProvider;
  /** Where everything is stored (SQLite by default; PostgreSQL with a database URL). */
  storage: Storage;
  logger: Logger;
  /** The JWT verifier of the configured OIDC issuer (absent without OIDC): AuthService's `deps.jwt`. */
  jwt?: JwtVerifier | undefined;
  /**
   * A graceful stop's first step: running turns may finish for up to `deadlineMs`, then those
   * left end FAILED ("the server shut down"). close() does it too, without waiting.
   */
  drain(deadlineMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The status message of a turn still running when a graceful stop's deadline passed. */
const SHUTDOWN_TEXT =
  'Interrupted: the server shut down before this task finished; send the message again (with a new messageId) to retry';

/**
 * Structured logs go to stderr (stdout belongs to the protocol in stdio mode), written
 * synchronously, the lines of one event-loop turn in one write (see log-destination.ts).
 */
export function createLogger(level: string): Logger {
  const sink = new TickBatchedDestination(pino.destination({ fd: 2, sync: true }));
  return pino({ level, base: { pid: process.pid } }, sink);
}

/** Opens the configured storage: PostgreSQL when a database URL is given, else the SQLite file. */
async function openStorage(
  opts: AppOptions & { file: string; logger: Logger; leaseMs: number | undefined },
): Promise<Storage> {
  const runnerId = randomUUID();
  if (opts.databaseUrl) {
    return openPgStorage({
      url: opts.databaseUrl,
      poolSize: opts.databasePoolSize,
      logger: opts.logger,
      runnerId,
      leaseMs: opts.leaseMs,
    });
  }
  return openSqliteStorage({
    file: opts.file,
    logger: opts.logger,
    busyTimeoutMs: opts.busyTimeoutMs,
    runnerId,
    leaseMs: opts.leaseMs,
  });
}

/** The composition root: the only place that knows every layer. */
export async function buildApp(opts: AppOptions): Promise<App> {
  const logger = opts.logger ?? createLogger('warn');
  // Checked before anything opens: a malformed entry is a start-up error and changes nothing.
  const egressConfig = egressSettings(opts.allowEgress);
  if (egressConfig.deprecatedAlias)
    logger.warn(
      { setting: 'CLEVERAGENTS_PUSH_ALLOW_HOSTS' },
      'CLEVERAGENTS_PUSH_ALLOW_HOSTS is deprecated: use CLEVERAGENTS_ALLOW_EGRESS (or agents serve --allow-egress)',
    );
  const file = opts.inMemory ? ':memory:' : databaseFile(opts.dataDir);
  // Discovery runs while the database opens; a failure does not stop the start (retried later).
  const discovering = opts.oidc ? tryDiscovery(opts.oidc, logger) : Promise.resolve(undefined);
  // Checked first (a bad setting changes nothing); probed while the database opens.
  const probing = CommandConfinement.probe(confinementSettings(opts));
  probing.catch(() => {});
  const leaseMs = opts.runnerLeaseMs ?? (Number(process.env['CLEVERAGENTS_RUNNER_LEASE_MS']) || undefined);
  // This process's lease: the tasks it runs carry its id, so others can tell what is stranded.
  const storage = await openStorage({ ...opts, file, logger, leaseMs });
  const confinement = await probing.catch(async (err: unknown) => {
    await storage.close();
    throw err;
  });
  if (confinement.mode !== 'bubblewrap')
    logger.warn({ confinement: confinement.describe() }, 'commands are not confined');
  const limits: PayloadLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const runners = storage.runners;
  try {
    await runners.start();
  } catch (err) {
    await storage.close();
    throw err;
  }
  const stepMs = opts.conformanceStepMs ?? (Number(process.env['CLEVERAGENTS_CONFORMANCE_STEP_MS']) || undefined);
  const actorsByModel = builtinActorsByModel({ conformance: stepMs !== undefined ? { stepMs } : {} });
  const defaultActor = opts.defaultActor ?? process.env['CLEVERAGENTS_DEFAULT_ACTOR'] ?? 'builtin/echo';
  const server = opts.card.auth === 'bearer';
  // One guard for every outbound URL a definition or a request names. Local mode (no
  // authentication: the machine's own user) lets LLM endpoints reach the user's own services (an
  // Ollama on 127.0.0.1); webhooks and hooks pass the guard in both modes.
  const egress = new EgressGuard({ allow: egressConfig.allowlist });
  const webhooks = new HttpWebhookSender({ guard: egress });
  const inspector = new FsResourceInspector();
  // What a member's definitions may make the server do is what an administrator granted (issue #35).
  const capabilities = new CapabilityService({
    grants: storage.grants,
    inspector,
    settings: server
      ? {
          mode: 'server',
          workspaceRoot: opts.workspaceRoot ?? join(opts.dataDir, 'workspaces'),
          hiddenPaths: [{ path: opts.dataDir, label: '<data dir>' }],
        }
      : { mode: 'local' },
    // A definition's URL that reaches a private address needs private-network on a server only.
    egress: server ? egress : undefined,
    namespaceExists: async (name) => (await storage.namespaces.get(name)) !== undefined,
    audit: new AuditService(storage.audit, logger),
  });
  // MCP servers start when a tool is first needed; every one is stopped at close(). On a server a
  // member's stdio server runs confined, with the host network only where its namespace holds private-network.
  const mcp = new SdkMcpHub({
    logger,
    ...(server
      ? {
          policy: async (use) => ({
            confine: true,
            privateNetwork: use !== undefined && (await capabilities.holds(use.namespace, 'private-network')),
          }),
          confinement: { prepare: (inv) => confinement.prepare(inv), scratchRoot: join(opts.dataDir, 'mcp') },
          guardedFetch: egress.fetch,
        }
      : {}),
  });
  const retryBaseMs = opts.llmRetryBaseMs ?? envInt('CLEVERAGENTS_LLM_RETRY_BASE_MS', 0, 60_000);
  const tokens = new GptTokenCounter();
  const oidc = opts.oidc;
  const discovered = await discovering;
  const jwt = oidc
    ? new JoseJwtVerifier({
        issuer: oidc.issuer,
        audience: oidc.audience,
        // Without discovery the verifier reads it on first use (and again after a failure).
        jwksUri: discovered?.jwksUri,
        userClaim: oidc.userClaim,
        rolesClaim: oidc.rolesClaim,
        cooldownMs: oidc.jwksCooldownMs,
        maxLifetimeSec: oidc.maxTokenLifetimeSec,
      })
    : undefined;
  const accounts = storage.accounts;
  const secrets = await openSecrets({
    storage,
    keyFile: secretKeyFileOf(opts),
    showPath: opts.card.auth !== 'bearer',
    logger,
  }).catch(async (err: unknown) => {
    await runners.stop().catch(() => {});
    await storage.close();
    throw err;
  });
  // The sandboxes' git runs in the commands' confinement; applies a crash interrupted are finished first.
  const sandboxes = new GitSandboxManager({ root: join(opts.dataDir, 'sandboxes'), confinement });
  for (const r of await sandboxes.recoverApplies().catch((err: unknown) => {
    logger.error({ err }, 'recovering interrupted applies failed');
    return [];
  }))
    logger.warn({ ...r }, `an interrupted apply was ${r.outcome}: ${r.detail}`);
  const facade = createServiceFacade({
    tasks: storage.tasks,
    sessions: storage.sessions,
    pushConfigs: storage.pushConfigs,
    pushOutbox: storage.pushOutbox,
    pushScheduler: storage.pushScheduler,
    registry: storage.registry,
    namespaces: storage.namespaces,
    inspector,
    plans: storage.plans,
    sandboxes,
    tools: new BuiltinToolRunner({ confinement }),
    webhooks,
    egress,
    // Hook commands run confined like every command; hook webhooks pass the egress guard.
    hookRunner: new LocalHookRunner({ confinement, egress }),
    probe: new HostSystemProbe({
      storage,
      dataDir: opts.dataDir,
      version: VERSION,
      tokenFile: opts.tokenFile,
      confinement,
    }),
    actorsByModel,
    logger,
    version: VERSION,
    defaultActor,
    limits,
    llm: {
      models: new AiSdkLanguageModels({
        ...(retryBaseMs !== undefined ? { retryBaseMs } : {}),
        ...(server ? { guard: egress } : {}),
      }),
      // An actor's apiKeySecret is read from the secrets of the actor's own namespace.
      keys: new EnvFileApiKeys({ env: opts.env ?? process.env, secret: (ns, name) => secrets.reveal(ns, name) }),
      tokens,
      validator: new AjvSchemaValidator(),
      mcp,
      transcripts: storage.transcripts,
    },
    context: { inventory: new FsFileInventory(), tokens },
    audit: storage.audit,
    jwt,
    // A local setup syncs with the server `agents server connect` named (a server refuses sync).
    sync: {
      state: storage.syncState,
      connection: new FileRemoteConnectionStore(opts.dataDir),
      remotes: httpSyncRemote,
    },
    accounts: { repo: accounts, hasher: new ScryptKeyHasher() },
    capabilities,
    secrets,
    // Server mode: namespace members are chosen among its users (local mode has one user).
    ...(opts.card.auth === 'bearer'
      ? { users: { exists: async (n: string) => (await accounts.getUser(n)) !== undefined } }
      : {}),
  });
  try {
    if (!(await facade.actors.resolve(defaultActor))) throw new Error(`no actor named ${defaultActor}`);
  } catch (err) {
    await runners.stop().catch(() => {});
    await mcp.close().catch(() => {});
    await storage.close();
    throw new StartupError(
      `the default actor ${defaultActor} cannot be used: ${(err as Error).message}`,
      `pass --default-actor (or CLEVERAGENTS_DEFAULT_ACTOR) naming an actor; built-in actors: ${facade.actors.names().join(', ')}`,
    );
  }
  const table = buildMethodTable();
  const card = new AgentCardProvider(
    {
      name: 'CleverAgents',
      description:
        'An agent platform: chat sessions with actors, tasks you can follow, cancel and subscribe to, over A2A.',
      version: VERSION,
      pushNotifications: true,
      ...opts.card,
      ...(oidc ? { oidc: cardOidc(oidc, discovered) } : {}),
    },
    table.all,
  );
  // The card's device endpoints come once the issuer answers discovery.
  let retryDiscovery: NodeJS.Timeout | undefined;
  let closing = false;
  if (oidc && !discovered) {
    const retry = (): void => {
      if (closing) return;
      retryDiscovery = setTimeout(() => {
        void tryDiscovery(oidc, logger).then((d) => {
          if (closing) return;
          if (d) {
            card.setOidc(cardOidc(oidc, d));
            logger.info({ issuer: oidc.issuer }, 'OIDC discovery succeeded');
          } else retry();
        });
      }, oidc.discoveryRetryMs ?? 30_000);
      retryDiscovery.unref();
    };
    retry();
  }
  // Before serving: what a stopped process left running is settled, so nobody waits on it.
  const stranded = { tasks: facade.tasks, plans: facade.plans, runners, logger };
  await settleStrandedWork(stranded);
  // Push deliveries a stopped process left pending (ours are delivered by us from now on).
  const resumePush = (): Promise<number> => facade.notifier.resume((id) => runners.isLive(id));
  await resumePush();
  await runners.prune();
  const sweeper = setInterval(() => {
    void settleStrandedWork(stranded)
      .then(resumePush)
      .then(() => runners.prune())
      .catch((err: unknown) => logger.warn({ err }, 'settling stranded work failed'));
  }, leaseMs ?? 15_000);
  sweeper.unref();
  let drained: Promise<void> | undefined;
  const drain = (deadlineMs: number): Promise<void> =>
    (drained ??= (async () => {
      clearInterval(sweeper);
      await facade.tasks.drainTurns(deadlineMs, SHUTDOWN_TEXT);
      await settleStrandedWork(stranded, { text: SHUTDOWN_TEXT, treatSelfAsGone: true });
    })().catch((err: unknown) => logger.error({ err }, 'settling running work at shutdown failed')));
  const dispatcher = new Dispatcher({
    facade,
    card,
    table,
    logger,
    validateResults: opts.validateResults ?? process.env['CLEVERAGENTS_VALIDATE_RESULTS'] === '1',
    maxJsonDepth: limits.maxJsonDepth,
  });
  return {
    facade,
    dispatcher,
    card,
    storage,
    logger,
    jwt,
    drain,
    async close() {
      closing = true;
      clearTimeout(retryDiscovery);
      await drain(0);
      // What is not delivered by then stays in the outbox for the next start.
      const grace = (ms: number): Promise<unknown> => new Promise((r) => setTimeout(r, ms).unref());
      await Promise.race([facade.notifier.drain(), grace(2000)]);
      await Promise.race([facade.notifier.stop(), grace(1000)]);
      await mcp.close().catch((err: unknown) => logger.warn({ err }, 'stopping the MCP servers failed'));
      sandboxes.close();
      await runners.stop().catch((err: unknown) => logger.warn({ err }, 'giving up the runner lease failed'));
      await egress.close().catch(() => {});
      await storage.close();
    },
  };
}

/** The issuer's discovery document, or undefined (logged as a warning) when it cannot be read now. */
async function tryDiscovery(oidc: OidcOptions, logger: Logger): Promise<OidcDiscovery | undefined> {
  try {
    return await discoverOidc(oidc.issuer, { timeoutMs: oidc.discoveryTimeoutMs ?? 3_000 });
  } catch (err) {
    logger.warn(
      { issuer: oidc.issuer, err: (err as Error).message },
      'OIDC discovery failed: JWTs are verified once the issuer answers (API keys work meanwhile)',
    );
    return undefined;
  }
}

function cardOidc(oidc: OidcOptions, d: OidcDiscovery | undefined): CardOidc {
  return {
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    metadataUrl: d?.metadataUrl ?? oidcMetadataUrl(oidc.issuer),
    deviceAuthorizationUrl: d?.deviceAuthorizationEndpoint,
    tokenUrl: d?.tokenEndpoint,
  };
}

/**
 * How every command for an actor or a plan runs: inside bubblewrap (probed once, here), or — only
 * when the user says so with CLEVERAGENTS_CONFINEMENT=none — unconfined. CLEVERAGENTS_BWRAP names
 * the program; the CLEVERAGENTS_COMMAND_* variables set the limits; `--read-only-path` and
 * CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS (colon-separated: it also reaches the local agent the
 * CLI spawns, which has no flags of its own) name the toolchains commands see read-only.
 */
function confinementSettings(opts: AppOptions): ConfinementSettings {
  const setting = opts.confinement?.mode ?? (process.env['CLEVERAGENTS_CONFINEMENT']?.trim() || 'bubblewrap');
  if (setting !== 'bubblewrap' && setting !== 'none')
    throw new StartupError(
      `CLEVERAGENTS_CONFINEMENT must be bubblewrap or none (got ${JSON.stringify(setting.slice(0, 40))})`,
      'unset it (commands run in bubblewrap), or set it to none to run commands unconfined',
    );
  const mib = (name: string): number | undefined => {
    const n = envInt(name, 1, 1024 * 1024);
    return n === undefined ? undefined : n * 1024 * 1024;
  };
  const limits = {
    memoryBytes: mib('CLEVERAGENTS_COMMAND_MEMORY_MB'),
    maxProcesses: envInt('CLEVERAGENTS_COMMAND_MAX_PROCESSES', 0, 1_000_000),
    maxOutputBytes: mib('CLEVERAGENTS_COMMAND_MAX_OUTPUT_MB'),
  };
  const home = homedir();
  const secrets = [
    configDir(),
    opts.dataDir,
    tokenFile(opts.dataDir),
    secretKeyFileOf(opts),
    ...(opts.tokenFile ? [opts.tokenFile] : []),
  ];
  return {
    mode: setting,
    bwrapPath: opts.confinement?.bwrapPath ?? (process.env['CLEVERAGENTS_BWRAP'] || undefined),
    home,
    secrets,
    limits: Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
    readOnlyPaths: readOnlyPaths(opts.confinement?.readOnlyPaths ?? [], maskedPaths(home, secrets)),
  };
}

/** `--read-only-path` flags and CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS, each checked (a bad one stops the start). */
function readOnlyPaths(flags: readonly string[], hidden: readonly string[]): string[] {
  const env = 'CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS';
  const given: [string, string][] = [
    ...flags.map((p): [string, string] => [p, '--read-only-path']),
    ...(process.env[env] ?? '')
      .split(':')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p): [string, string] => [p, env]),
  ];
  for (const [p, source] of given) {
    const problem = readOnlyPathProblem(p, hidden);
    if (problem)
      throw new StartupError(
        `the read-only path ${JSON.stringify(p.slice(0, 200))} (${source}) ${problem}`,
        problem.startsWith('is inside')
          ? 'name a toolchain directory outside the data and config directories and the secrets of the home (~/.ssh, ~/.aws, …); they stay hidden from commands'
          : `name an existing directory by its absolute path, e.g. --read-only-path /opt/go (or ${env}=/opt/go:/opt/jdk); see agents serve --help`,
      );
  }
  return [...new Set(given.map(([p]) => resolve(p)))];
}

/** Where the secret key is: the option, else CLEVERAGENTS_SECRET_KEY_FILE, else beside the database. */
function secretKeyFileOf(opts: AppOptions): string {
  return opts.secretKeyFile ?? secretKeyFile(opts.dataDir, process.env);
}

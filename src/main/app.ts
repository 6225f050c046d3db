import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import {
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
  GitSandboxManager,
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
import { configDir, databaseFile, tokenFile } from './paths.js';
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
  /** Hosts webhooks may target even when they resolve to loopback/private addresses. */
  pushAllowHosts?: readonly string[];
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
  confinement?: { mode?: 'bubblewrap' | 'none'; bwrapPath?: string };
  /** Where actors' API keys come from (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** First wait before an LLM request is retried (ms; default 1000). */
  llmRetryBaseMs?: number;
  /** Server mode: accept JWTs of this OpenID Connect issuer and declare its device login on the card. */
  oidc?: OidcOptions | undefined;
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
  // MCP servers start when a tool is first needed; every one is stopped at close().
  const mcp = new SdkMcpHub({ logger });
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
      })
    : undefined;
  const accounts = storage.accounts;
  // The sandboxes' git runs in the commands' confinement; applies a crash interrupted are finished first.
  const sandboxes = new GitSandboxManager({ root: join(opts.dataDir, 'sandboxes'), confinement });
  for (const r of await sandboxes.recoverApplies().catch((err: unknown) => {
    logger.error({ err }, 'recovering interrupted applies failed');
    return [];
  }))
    logger.warn({ ...r }, `an interrupted apply was ${r.outcome}: ${r.detail}`);
  const webhooks = new HttpWebhookSender({
    allowHosts: opts.pushAllowHosts ?? envList('CLEVERAGENTS_PUSH_ALLOW_HOSTS'),
  });
  const facade = createServiceFacade({
    tasks: storage.tasks,
    sessions: storage.sessions,
    pushConfigs: storage.pushConfigs,
    pushOutbox: storage.pushOutbox,
    pushScheduler: storage.pushScheduler,
    registry: storage.registry,
    namespaces: storage.namespaces,
    inspector: new FsResourceInspector(),
    plans: storage.plans,
    sandboxes,
    tools: new BuiltinToolRunner({ confinement }),
    webhooks,
    // Hook commands run confined like every command; hook webhooks pass the push webhooks' URL check.
    hookRunner: new LocalHookRunner({ confinement, urlGuard: webhooks }),
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
      models: new AiSdkLanguageModels(retryBaseMs !== undefined ? { retryBaseMs } : {}),
      keys: new EnvFileApiKeys({ env: opts.env ?? process.env }),
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
 * the program; the CLEVERAGENTS_COMMAND_* variables set the limits.
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
  return {
    mode: setting,
    bwrapPath: opts.confinement?.bwrapPath ?? (process.env['CLEVERAGENTS_BWRAP'] || undefined),
    home: homedir(),
    secrets: [configDir(), opts.dataDir, tokenFile(opts.dataDir), ...(opts.tokenFile ? [opts.tokenFile] : [])],
    limits: Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
  };
}

function envList(name: string): string[] {
  return (process.env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

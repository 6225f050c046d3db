import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import pino from 'pino';
import {
  builtinActorsByModel,
  createServiceFacade,
  settleStrandedWork,
  type JwtVerifier,
  type Logger,
  type ServiceFacade,
} from '../application/index.ts';
import {
  AiSdkLanguageModels,
  AjvSchemaValidator,
  BuiltinToolRunner,
  CommandConfinement,
  EnvFileApiKeys,
  FsFileInventory,
  GptTokenCounter,
  FileRemoteConnectionStore,
  ScryptKeyHasher,
  GitSandboxManager,
  HostSystemProbe,
  ShadowHistory,
  LocalHookRunner,
  openSqliteStorage,
  openPgStorage,
  type Storage,
  JoseJwtVerifier,
} from '../infrastructure/index.ts';
import { AgentCardProvider, type AgentCardOptions } from '../protocol/a2a/agent-card.ts';
import { DEFAULT_LIMITS, type PayloadLimits } from '../domain/limits.ts';
import { buildMethodTable } from '../protocol/a2a/method-table.ts';
import { TickBatchedDestination } from './log-destination.ts';
import { Dispatcher } from '../protocol/server/dispatcher.ts';
import { envInt } from './limits-config.ts';
import { confinementSettings } from './confinement-config.ts';
import { cardOidc, tryDiscovery, type OidcOptions } from './oidc-wiring.ts';
import { egressSettings } from './egress-config.ts';
import { wireTrust } from './trust-wiring.ts';
import { databaseFile, secretKeyFile } from './paths.ts';
import { openSecrets } from './secrets.ts';
import { StartupError } from './startup-errors.ts';
import { httpSyncRemote } from './sync-remote.ts';
import { VERSION } from './version.ts';
import { messageOf } from '../domain/errors.ts';

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

export interface App {
  facade: ServiceFacade;
  dispatcher: Dispatcher;
  card: AgentCardProvider;
  /** Where everything is stored (SQLite by default; PostgreSQL with a database URL). */
  storage: Storage;
  logger: Logger;
  /** The JWT verifier of the configured OIDC issuer (absent without OIDC): the authentication service's JWT sign-in. */
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

export type { OidcOptions };

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
  // Checked first (a bad setting changes nothing). The probe is awaited only where a command is
  // confined or its mode reported, not by the start: it costs 40–90 ms that a command like
  // `agents health` never needs (awaiting it here is the plain fallback).
  const confinement = CommandConfinement.start(confinementSettings({ ...opts, secretKeyFile: secretKeyFileOf(opts) }));
  void confinement.then((c) => {
    if (c.mode !== 'bubblewrap') logger.warn({ confinement: c.describe() }, 'commands are not confined');
  });
  const leaseMs = opts.runnerLeaseMs ?? (Number(process.env['CLEVERAGENTS_RUNNER_LEASE_MS']) || undefined);
  // This process's lease: the tasks it runs carry its id, so others can tell what is stranded.
  const storage = await openStorage({ ...opts, file, logger, leaseMs });
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
  const { egress, webhooks, inspector, capabilities, mcp } = wireTrust({
    server,
    dataDir: opts.dataDir,
    workspaceRoot: opts.workspaceRoot,
    allowlist: egressConfig.allowlist,
    storage,
    confinement,
    logger,
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
    // Chat turns' undo: snapshots of project directories in `<data dir>/shadow`, records in storage.
    turnHistory: { files: new ShadowHistory({ base: join(opts.dataDir, 'shadow') }), records: storage.turnChanges },
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
      `the default actor ${defaultActor} cannot be used: ${messageOf(err)}`,
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

/** Where the secret key is: the option, else CLEVERAGENTS_SECRET_KEY_FILE, else beside the database. */
function secretKeyFileOf(opts: AppOptions): string {
  return opts.secretKeyFile ?? secretKeyFile(opts.dataDir, process.env);
}

import { randomUUID } from 'node:crypto';
import pino from 'pino';
import {
  builtinActorsByModel,
  currentRequest,
  type JwtVerifier,
  type Logger,
  type ServiceFacade,
  type Tracer,
} from '../application/index.ts';
import type { LiveTasks } from '../application/tasks/live-tasks.service.ts';
import {
  CommandConfinement,
  openSqliteStorage,
  openPgStorage,
  type OidcDiscovery,
  type Storage,
} from '../infrastructure/index.ts';
import { AgentCardProvider, type AgentCardOptions } from '../protocol/a2a/agent-card.ts';
import { DEFAULT_LIMITS, type PayloadLimits } from '../domain/limits.ts';
import { NO_LIMITS, type UsageLimits } from '../domain/quota.ts';
import { buildMethodTable } from '../protocol/a2a/method-table.ts';
import { TickBatchedDestination } from './log-destination.ts';
import { Dispatcher } from '../protocol/server/dispatcher.ts';
import { DiscoveryRetry, Upkeep } from './app-lifecycle.ts';
import { gitRemotesOf, jwtVerifierOf, openSandboxes, serviceDepsOf } from './app-services.ts';
import { composeServices } from './composition/index.ts';
import { confinementSettings } from './confinement-config.ts';
import { cardOidc, tryDiscovery, type OidcOptions } from './oidc-wiring.ts';
import { egressSettings } from './egress-config.ts';
import { wireTrust } from './trust-wiring.ts';
import { databaseFile, secretKeyFile } from './paths.ts';
import { openSecrets } from './open-secrets.ts';
import { StartupError } from './startup-errors.ts';
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
  /** Server mode: each user's default limits (`--rate-limit-rpm` …; absent: none). */
  usageLimits?: UsageLimits | undefined;
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
  /** Spans for requests' turns, model calls and tool calls (absent: tracing off). */
  tracer?: Tracer | undefined;
}

export interface App {
  facade: ServiceFacade;
  /** Tasks held in memory here (a running turn or a subscriber): what retention never deletes. */
  live: LiveTasks;
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

/**
 * Structured logs go to stderr (stdout belongs to the protocol in stdio mode), written
 * synchronously, the lines of one event-loop turn in one write (see log-destination.ts).
 */
export function createLogger(level: string): Logger {
  const sink = new TickBatchedDestination(pino.destination({ fd: 2, sync: true }));
  // A line written on behalf of a request (the request's own, the services' and repositories'
  // it calls, the turn it starts) names the request: the operator follows one id through them.
  return pino({ level, base: { pid: process.pid }, mixin: requestFields }, sink);
}

const requestFields = (): object => {
  const request = currentRequest();
  return request ? { requestId: request.requestId } : {};
};

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

/** The composition root: the only place that knows every layer (the services: composition/). */
export async function buildApp(opts: AppOptions): Promise<App> {
  const logger = opts.logger ?? createLogger('warn');
  // Checked before anything opens: a malformed entry is a start-up error and changes nothing.
  const egressConfig = checkedEgress(opts, logger);
  // Discovery runs while the database opens; a failure does not stop the start (retried later).
  const discovering = opts.oidc ? tryDiscovery(opts.oidc, logger) : Promise.resolve(undefined);
  const confinement = startConfinement(opts, logger);
  const leaseMs = opts.runnerLeaseMs ?? (Number(process.env['CLEVERAGENTS_RUNNER_LEASE_MS']) || undefined);
  const storage = await openLeasedStorage(opts, logger, leaseMs);
  const { runners } = storage;
  const server = opts.card.auth === 'bearer';
  const trust = wireTrust({ server, ...opts, allowlist: egressConfig.allowlist, storage, confinement, logger });
  const discovered = await discovering;
  const jwt = jwtVerifierOf(opts.oidc, discovered);
  const secrets = await openSecrets({ storage, keyFile: secretKeyFileOf(opts), showPath: !server, logger }).catch(
    (err: unknown) => giveUp(err, [() => runners.stop(), () => storage.close()]),
  );
  const remotes = gitRemotesOf({
    server,
    dataDir: opts.dataDir,
    workspaceRoot: opts.workspaceRoot,
    egress: trust.egress,
    secrets,
    capabilities: trust.capabilities,
  });
  const sandboxes = await openSandboxes(opts.dataDir, confinement, logger, remotes);
  const defaultActor = opts.defaultActor ?? process.env['CLEVERAGENTS_DEFAULT_ACTOR'] ?? 'builtin/echo';
  const limits: PayloadLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const actorsByModel = builtinActors(opts);
  const usageLimits = opts.usageLimits ?? NO_LIMITS;
  const opened = {
    ...{ server, storage, confinement, trust, sandboxes, secrets, jwt, actorsByModel, defaultActor, limits },
    usageLimits,
  };
  const services = composeServices(serviceDepsOf({ options: opts, ...opened, logger }));
  const { facade } = services;
  await checkDefaultActor(facade, defaultActor).catch((err: unknown) =>
    giveUp(err, [() => runners.stop(), () => trust.mcp.close(), () => storage.close()]),
  );
  const table = buildMethodTable();
  const card = agentCard(opts, discovered, table);
  // The card's device endpoints come once the issuer answers discovery.
  const discovery = opts.oidc && !discovered ? new DiscoveryRetry(opts.oidc, card, logger) : undefined;
  // Before serving: what a stopped process left running is settled, so nobody waits on it.
  const upkeep = await Upkeep.start(services, runners, logger, runners.sweepEveryMs);
  const dispatcher = new Dispatcher({
    facade,
    card,
    table,
    logger,
    validateResults: opts.validateResults ?? process.env['CLEVERAGENTS_VALIDATE_RESULTS'] === '1',
    maxJsonDepth: limits.maxJsonDepth,
    admission: facade.quota,
  });
  const close = async (): Promise<void> => {
    discovery?.stop();
    await upkeep.drain(0);
    await closeParts({ facade, mcp: trust.mcp, sandboxes, runners, egress: trust.egress, storage, logger });
  };
  return {
    facade,
    live: services.live,
    dispatcher,
    card,
    storage,
    logger,
    jwt,
    drain: (ms) => upkeep.drain(ms),
    close,
  };
}

/** `--allow-egress` and its variables, checked; the deprecated variable still works, with a warning. */
function checkedEgress(opts: AppOptions, logger: Logger): ReturnType<typeof egressSettings> {
  const egress = egressSettings(opts.allowEgress);
  if (egress.deprecatedAlias)
    logger.warn(
      { setting: 'CLEVERAGENTS_PUSH_ALLOW_HOSTS' },
      'CLEVERAGENTS_PUSH_ALLOW_HOSTS is deprecated: use CLEVERAGENTS_ALLOW_EGRESS (or agents serve --allow-egress)',
    );
  return egress;
}

/** The storage with this process's lease taken: the tasks it runs carry its id, so others can tell what is stranded. */
async function openLeasedStorage(opts: AppOptions, logger: Logger, leaseMs: number | undefined): Promise<Storage> {
  const file = opts.inMemory ? ':memory:' : databaseFile(opts.dataDir);
  const storage = await openStorage({ ...opts, file, logger, leaseMs });
  try {
    await storage.runners.start();
  } catch (err) {
    await storage.close();
    throw err;
  }
  return storage;
}

/** A failed start: what was opened is closed, one after another (a failure to close is not the error), then the error is thrown. */
async function giveUp(err: unknown, closing: ReadonlyArray<() => Promise<unknown>>): Promise<never> {
  for (const close of closing) await close().catch(() => {});
  throw err;
}

/**
 * Checked first (a bad setting changes nothing). The probe is awaited only where a command is
 * confined or its mode reported, not by the start: it costs 40–90 ms that a command like
 * `agents health` never needs (awaiting it here is the plain fallback).
 */
function startConfinement(opts: AppOptions, logger: Logger): Promise<CommandConfinement> {
  const confinement = CommandConfinement.start(confinementSettings({ ...opts, secretKeyFile: secretKeyFileOf(opts) }));
  void confinement.then((c) => {
    if (c.mode !== 'bubblewrap') logger.warn({ confinement: c.describe() }, 'commands are not confined');
  });
  return confinement;
}

/** The deterministic actors (`echo`, `conformance`, with its step time from the options or the environment). */
function builtinActors(opts: AppOptions): ReturnType<typeof builtinActorsByModel> {
  const stepMs = opts.conformanceStepMs ?? (Number(process.env['CLEVERAGENTS_CONFORMANCE_STEP_MS']) || undefined);
  return builtinActorsByModel({
    conformance: stepMs !== undefined ? { stepMs } : {},
  });
}

/** A start-up error naming the built-in actors when the default actor cannot be used. */
async function checkDefaultActor(facade: ServiceFacade, defaultActor: string): Promise<void> {
  try {
    if (!(await facade.actors.resolve(defaultActor))) throw new Error(`no actor named ${defaultActor}`);
  } catch (err) {
    throw new StartupError(
      `the default actor ${defaultActor} cannot be used: ${messageOf(err)}`,
      `pass --default-actor (or CLEVERAGENTS_DEFAULT_ACTOR) naming an actor; built-in actors: ${facade.actors.names().join(', ')}`,
    );
  }
}

function agentCard(
  opts: AppOptions,
  discovered: OidcDiscovery | undefined,
  table: ReturnType<typeof buildMethodTable>,
): AgentCardProvider {
  return new AgentCardProvider(
    {
      name: 'CleverAgents',
      description:
        'An agent platform: chat sessions with actors, tasks you can follow, cancel and subscribe to, over A2A.',
      version: VERSION,
      pushNotifications: true,
      ...opts.card,
      ...(opts.oidc ? { oidc: cardOidc(opts.oidc, discovered) } : {}),
    },
    table.all,
  );
}

/** After the drain: what is not delivered by then stays in the outbox for the next start. */
async function closeParts(p: {
  facade: ServiceFacade;
  mcp: { close(): Promise<void> };
  sandboxes: { close(): void };
  runners: { stop(): Promise<void> };
  egress: { close(): Promise<void> };
  storage: Storage;
  logger: Logger;
}): Promise<void> {
  const grace = (ms: number): Promise<unknown> => new Promise((r) => setTimeout(r, ms).unref());
  await Promise.race([p.facade.notifier.drain(), grace(2000)]);
  await Promise.race([p.facade.notifier.stop(), grace(1000)]);
  await p.mcp.close().catch((err: unknown) => p.logger.warn({ err }, 'stopping the MCP servers failed'));
  p.sandboxes.close();
  await p.runners.stop().catch((err: unknown) => p.logger.warn({ err }, 'giving up the runner lease failed'));
  await p.egress.close().catch(() => {});
  await p.storage.close();
}

/** Where the secret key is: the option, else CLEVERAGENTS_SECRET_KEY_FILE, else beside the database. */
function secretKeyFileOf(opts: AppOptions): string {
  return opts.secretKeyFile ?? secretKeyFile(opts.dataDir, process.env);
}

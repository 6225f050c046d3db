import { join } from 'node:path';
import pino from 'pino';
import { builtinActorsByModel, createServiceFacade, type Logger, type ServiceFacade } from '../application/index.js';
import {
  BuiltinToolRunner,
  FsResourceInspector,
  GitSandboxManager,
  SqlitePlanRepository,
  HttpWebhookSender,
  openDatabase,
  SqlitePushConfigRepository,
  SqliteNamespaceRepository,
  SqliteRegistryRepository,
  SqliteSessionRepository,
  SqliteSystemProbe,
  SqliteTaskRepository,
  type SqliteDatabase,
} from '../infrastructure/index.js';
import { AgentCardProvider, type AgentCardOptions } from '../protocol/a2a/agent-card.js';
import { DEFAULT_LIMITS, type PayloadLimits } from '../domain/limits.js';
import { buildMethodTable } from '../protocol/a2a/method-table.js';
import { Dispatcher } from '../protocol/server/dispatcher.js';
import { databaseFile } from './paths.js';
import { StartupError } from './startup-errors.js';
import { VERSION } from './version.js';

export interface AppOptions {
  dataDir: string;
  /** Use an in-memory database (tests). */
  inMemory?: boolean;
  defaultActor?: string;
  logger?: Logger;
  card: Omit<AgentCardOptions, 'name' | 'description' | 'version' | 'pushNotifications'>;
  tokenFile?: string;
  validateResults?: boolean;
  /** Hosts webhooks may target even when they resolve to loopback/private addresses. */
  pushAllowHosts?: readonly string[];
  conformanceStepMs?: number;
  /** What a client may send (missing ones: DEFAULT_LIMITS). */
  limits?: Partial<PayloadLimits>;
  /** How long a write waits for another process's database lock (default 5 s). */
  busyTimeoutMs?: number;
}

export interface App {
  facade: ServiceFacade;
  dispatcher: Dispatcher;
  card: AgentCardProvider;
  db: SqliteDatabase;
  logger: Logger;
  close(): Promise<void>;
}

/** Structured logs go to stderr: stdout belongs to the protocol in stdio mode. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
}

/** The composition root: the only place that knows every layer. */
export async function buildApp(opts: AppOptions): Promise<App> {
  const logger = opts.logger ?? createLogger('warn');
  const file = opts.inMemory ? ':memory:' : databaseFile(opts.dataDir);
  const db = await openDatabase({ file, logger, busyTimeoutMs: opts.busyTimeoutMs });
  const limits: PayloadLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const actorsByModel = builtinActorsByModel({ conformance: opts.conformanceStepMs !== undefined ? { stepMs: opts.conformanceStepMs } : {} });
  const defaultActor = opts.defaultActor ?? process.env['CLEVERAGENTS_DEFAULT_ACTOR'] ?? 'builtin/echo';
  const facade = createServiceFacade({
    tasks: new SqliteTaskRepository(db),
    sessions: new SqliteSessionRepository(db),
    pushConfigs: new SqlitePushConfigRepository(db),
    registry: new SqliteRegistryRepository(db),
    namespaces: new SqliteNamespaceRepository(db),
    inspector: new FsResourceInspector(),
    plans: new SqlitePlanRepository(db),
    sandboxes: new GitSandboxManager({ root: join(opts.dataDir, 'sandboxes') }),
    tools: new BuiltinToolRunner(),
    webhooks: new HttpWebhookSender({ allowHosts: opts.pushAllowHosts ?? envList('CLEVERAGENTS_PUSH_ALLOW_HOSTS') }),
    probe: new SqliteSystemProbe({ db, dataDir: opts.dataDir, dbFile: file, version: VERSION, tokenFile: opts.tokenFile }),
    actorsByModel,
    logger,
    version: VERSION,
    defaultActor,
    limits,
  });
  try {
    if (!(await facade.actors.resolve(defaultActor))) throw new Error(`no actor named ${defaultActor}`);
  } catch (err) {
    await db.close();
    throw new StartupError(
      `the default actor ${defaultActor} cannot be used: ${(err as Error).message}`,
      `pass --default-actor (or CLEVERAGENTS_DEFAULT_ACTOR) naming an actor; built-in actors: ${facade.actors.names().join(', ')}`,
    );
  }
  const table = buildMethodTable();
  const card = new AgentCardProvider(
    {
      name: 'CleverAgents',
      description: 'An agent platform: chat sessions with actors, tasks you can follow, cancel and subscribe to, over A2A.',
      version: VERSION,
      pushNotifications: true,
      ...opts.card,
    },
    table.all,
  );
  const dispatcher = new Dispatcher({ facade, card, table, logger, validateResults: opts.validateResults ?? process.env['CLEVERAGENTS_VALIDATE_RESULTS'] === '1', maxJsonDepth: limits.maxJsonDepth });
  return {
    facade,
    dispatcher,
    card,
    db,
    logger,
    async close() {
      await Promise.race([facade.notifier.drain(), new Promise((r) => setTimeout(r, 2000).unref())]);
      await db.close();
    },
  };
}

function envList(name: string): string[] {
  return (process.env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

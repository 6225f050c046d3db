import { Option, type Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import type { GlobalFlags } from '../config.ts';
import type { ExitStatus } from '../exit-status.ts';
import { LIMIT_MAX as MAX_LIMIT } from '../../../protocol/client/index.ts';
import { intOption } from '../support/options.ts';
import { collect } from './session.command.ts';

/** What `agents serve` asks the composition root to run. */
export interface ServeOptions {
  stdio: boolean;
  host: string;
  port: number;
  token?: string;
  dataDir?: string;
  defaultActor?: string;
  verbose: boolean;
  maxBodyBytes?: number;
  /** Payload limits (flags); the composition root adds the environment and the defaults. */
  maxJsonDepth?: number;
  maxParts?: number;
  maxPartBytes?: number;
  maxMessageBytes?: number;
  maxMetadataKeys?: number;
  /** The URL clients reach the server at (behind a proxy); the Agent Card's URLs derive from it. */
  publicUrl?: string;
  /** Delete terminal tasks and dead sessions older than this many days (0: never). */
  retentionDays?: number;
  /** Keep at most this many terminal tasks (0: no limit). */
  retentionMaxTasks?: number;
  /** OpenID Connect (flags; the composition root adds CLEVERAGENTS_OIDC_*): accept the issuer's JWTs. */
  oidcIssuer?: string;
  oidcAudience?: string;
  oidcClientId?: string;
  oidcUserClaim?: string;
  oidcRolesClaim?: string;
  /** PostgreSQL URL: store everything there (several instances may share it). */
  databaseUrl?: string;
  /** PostgreSQL connections per instance. */
  databasePool?: number;
  /** Server mode: the directory holding each namespace's workspace (`<dir>/<namespace>`). */
  workspaceRoot?: string;
  /**
   * `--allow-egress HOST[:PORT]` (repeatable): hosts outbound requests (LLM endpoints, MCP servers,
   * webhooks) may reach although they are loopback or private; the composition root adds
   * CLEVERAGENTS_ALLOW_EGRESS.
   */
  allowEgress?: string[];
  /**
   * Stdio: open nothing until the client writes (the CLI spawns its agent before it knows it
   * needs one, presentation/cli/early-agent.ts); a client that closes stdin first ends it.
   */
  awaitClient?: boolean;
  /** Directories (toolchains) confined commands see read-only, on top of the system's (repeatable flag). */
  readOnlyPaths?: string[];
  /** Server mode, per user (0: no limit; the composition root adds CLEVERAGENTS_RATE_LIMIT_RPM …). */
  rateLimitRpm?: number;
  maxConcurrentTurns?: number;
  tokensPerDay?: number;
  /** Serve Prometheus metrics at GET /metrics (administrators only); the root adds CLEVERAGENTS_METRICS. */
  metrics?: boolean;
  /** Send OpenTelemetry traces to this OTLP/HTTP base URL; the root adds OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpEndpoint?: string;
  /** `--trust-proxy ADDR|CIDR` (repeatable): proxies whose X-Forwarded-For names the client; the composition root adds CLEVERAGENTS_TRUST_PROXY. */
  trustProxy?: string[];
  /** After SIGTERM: how long to serve on with /ready answering 503 before accepting stops. */
  drainWindowMs?: number;
  /** After accepting stopped: how long running turns may finish before they end FAILED. */
  drainMs?: number;
}

const OIDC_FLAGS = ['oidcIssuer', 'oidcAudience', 'oidcClientId', 'oidcUserClaim', 'oidcRolesClaim'] as const;

const LIMIT_FLAGS = ['maxJsonDepth', 'maxParts', 'maxPartBytes', 'maxMessageBytes', 'maxMetadataKeys'] as const;

const USAGE_FLAGS = ['rateLimitRpm', 'maxConcurrentTurns', 'tokensPerDay'] as const;

/** The parsed flags: what serve takes, as commander hands it over (`--stdio` may be absent). */
type ServeFlags = GlobalFlags &
  Omit<ServeOptions, 'stdio' | 'verbose' | 'token' | 'dataDir' | 'awaitClient' | 'readOnlyPaths'> & {
    stdio?: boolean;
    awaitClient?: boolean;
    readOnlyPath?: string[];
  };

/** `agents serve`'s flags, as the composition root takes them: only what was given (it adds env and defaults). */
export function serveOptionsOf(f: ServeFlags): ServeOptions {
  const opts: ServeOptions = { stdio: f.stdio === true, host: f.host, port: f.port, verbose: f.verbose === true };
  if (f.token) opts.token = f.token;
  if (f.dataDir) opts.dataDir = f.dataDir;
  if (f.defaultActor) opts.defaultActor = f.defaultActor;
  if (f.maxBodyBytes !== undefined) opts.maxBodyBytes = f.maxBodyBytes;
  for (const k of LIMIT_FLAGS) if (f[k] !== undefined) opts[k] = f[k];
  for (const k of USAGE_FLAGS) if (f[k] !== undefined) opts[k] = f[k];
  if (f.publicUrl !== undefined) opts.publicUrl = f.publicUrl;
  if (f.retentionDays !== undefined) opts.retentionDays = f.retentionDays;
  if (f.retentionMaxTasks !== undefined) opts.retentionMaxTasks = f.retentionMaxTasks;
  for (const k of OIDC_FLAGS) if (f[k] !== undefined) opts[k] = f[k];
  if (f.databaseUrl !== undefined) opts.databaseUrl = f.databaseUrl;
  if (f.databasePool !== undefined) opts.databasePool = f.databasePool;
  if (f.workspaceRoot !== undefined) opts.workspaceRoot = f.workspaceRoot;
  if (f.allowEgress !== undefined) opts.allowEgress = f.allowEgress;
  if (f.awaitClient === true) opts.awaitClient = true;
  if (f.readOnlyPath !== undefined) opts.readOnlyPaths = f.readOnlyPath;
  if (f.metrics === true) opts.metrics = true;
  if (f.otlpEndpoint !== undefined) opts.otlpEndpoint = f.otlpEndpoint;
  if (f.trustProxy !== undefined) opts.trustProxy = f.trustProxy;
  if (f.drainWindowMs !== undefined) opts.drainWindowMs = f.drainWindowMs;
  if (f.drainMs !== undefined) opts.drainMs = f.drainMs;
  return opts;
}

/** The limits on what one request may hold. */
function requestLimitOptions(command: CliCommand): void {
  command
    .option(
      '--max-body-bytes <n>',
      'largest request body accepted (env CLEVERAGENTS_MAX_BODY_BYTES; default 1048576)',
      intOption(1),
    )
    .option(
      '--max-json-depth <n>',
      'deepest nesting of a request (env CLEVERAGENTS_MAX_JSON_DEPTH; default 64)',
      intOption(2),
    )
    .option('--max-parts <n>', 'parts in one message (env CLEVERAGENTS_MAX_PARTS; default 100)', intOption(1))
    .option('--max-part-bytes <n>', 'size of one part (env CLEVERAGENTS_MAX_PART_BYTES; default 1048576)', intOption(1))
    .option(
      '--max-message-bytes <n>',
      'size of one message (env CLEVERAGENTS_MAX_MESSAGE_BYTES; default 4194304)',
      intOption(1),
    )
    .option(
      '--max-metadata-keys <n>',
      'keys in one metadata object (env CLEVERAGENTS_MAX_METADATA_KEYS; default 64)',
      intOption(0),
    );
}

/**
 * Each user's limits on a server (off by default: one operator's fair share is not another's, and
 * a limit nobody chose would refuse work on an upgrade). A namespace may override them.
 */
function usageLimitOptions(command: CliCommand): void {
  command
    .option(
      '--rate-limit-rpm <n>',
      'requests per minute per user, counted by each instance on its own (env CLEVERAGENTS_RATE_LIMIT_RPM; default 0: no limit)',
      intOption(0, MAX_LIMIT),
    )
    .option(
      '--max-concurrent-turns <n>',
      'turns a user may have running at once, across instances (env CLEVERAGENTS_MAX_CONCURRENT_TURNS; default 0: no limit)',
      intOption(0, MAX_LIMIT),
    )
    .option(
      '--tokens-per-day <n>',
      "model tokens a user's turns may use per UTC day, across instances (env CLEVERAGENTS_TOKENS_PER_DAY; default 0: no limit)",
      intOption(0, MAX_LIMIT),
    );
}

/** Accepting an OpenID Connect issuer's JWTs, and the device login it offers. */
function oidcOptions(command: CliCommand): void {
  command
    .option(
      '--oidc-issuer <url>',
      'accept JWTs of this OpenID Connect issuer and offer device login (env CLEVERAGENTS_OIDC_ISSUER; needs --oidc-audience)',
    )
    .option('--oidc-audience <aud>', 'the audience (aud) every JWT must carry (env CLEVERAGENTS_OIDC_AUDIENCE)')
    .option(
      '--oidc-client-id <id>',
      'the OAuth client id `agents login --device` uses, announced on the Agent Card (env CLEVERAGENTS_OIDC_CLIENT_ID)',
    )
    .option(
      '--oidc-user-claim <claim>',
      'the claim naming the user (env CLEVERAGENTS_OIDC_USER_CLAIM; default preferred_username, then sub)',
    )
    .option(
      '--oidc-roles-claim <claim>',
      'the claim carrying namespace roles, {"ns": "role"} or ["ns:role", …] (env CLEVERAGENTS_OIDC_ROLES_CLAIM; default none)',
    );
}

/** Where the server keeps things, what it may reach, and what confined commands see. */
function deploymentOptions(command: CliCommand): void {
  command
    .option(
      '--database-url <url>',
      'store everything in PostgreSQL, postgres://user:password@host:5432/db (env CLEVERAGENTS_DATABASE_URL; default: SQLite in the data dir)',
    )
    .option(
      '--allow-egress <host[:port]>',
      'let outbound requests (LLM endpoints, MCP servers, webhooks) reach this loopback or private host, every port without :port (repeatable; env CLEVERAGENTS_ALLOW_EGRESS, comma-separated)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--database-pool <n>',
      'PostgreSQL connections of this instance (env CLEVERAGENTS_DATABASE_POOL; default 10)',
      intOption(1, 1000),
    )
    .option(
      '--workspace-root <dir>',
      "where each namespace's resources live, <dir>/<namespace> (env CLEVERAGENTS_WORKSPACE_ROOT; default <data dir>/workspaces)",
    )
    .option(
      '--read-only-path <dir>',
      'show this directory (a toolchain outside /usr, e.g. /opt/go) read-only to confined commands; repeatable (env CLEVERAGENTS_CONFINEMENT_READ_ONLY_PATHS, colon-separated; both add up)',
      collect,
    );
}

/** What an operator watches the server with: metrics and traces, both off by default. */
function telemetryOptions(command: CliCommand): void {
  command
    .option(
      '--metrics',
      'serve Prometheus metrics at GET /metrics to administrators (env CLEVERAGENTS_METRICS=1; default off)',
    )
    .option(
      '--otlp-endpoint <url>',
      'send OpenTelemetry traces to this OTLP/HTTP endpoint, e.g. http://collector:4318 (env OTEL_EXPORTER_OTLP_ENDPOINT; default off)',
    );
}

/** Where clients come from, and how the server stops. */
function operationOptions(command: CliCommand): void {
  command
    .option(
      '--trust-proxy <addr|cidr>',
      "read the client's address from X-Forwarded-For on connections from this proxy (repeatable; env CLEVERAGENTS_TRUST_PROXY, comma-separated; default none)",
      collect,
    )
    .option(
      '--drain-window-ms <ms>',
      'after SIGTERM or SIGINT, keep serving this long with /ready answering 503 before accepting stops (env CLEVERAGENTS_DRAIN_WINDOW_MS; default 5000; a second signal skips it)',
      intOption(0, 600_000),
    )
    .option(
      '--drain-ms <ms>',
      'then let running turns finish this long; those left end FAILED (env CLEVERAGENTS_DRAIN_MS; default 4000)',
      intOption(0, 3_600_000),
    );
}

/** `agents serve` only parses its flags: serving is the composition root's job. */
export function registerServe(
  program: CliCommand,
  serve: (opts: ServeOptions) => Promise<number>,
  status: ExitStatus,
): void {
  const command = program
    .command('serve')
    .description('Run the agent: HTTP server mode (default), or --stdio for a client that spawned it')
    .option('--stdio', 'speak JSON-RPC over stdin/stdout (local mode)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', intOption(0, 65535), 8080)
    .option('--default-actor <name>', 'the actor of sessions created without one (default builtin/echo)');
  // Added group by group, in the order `agents serve --help` lists them.
  requestLimitOptions(command);
  command
    .option(
      '--public-url <url>',
      'the URL clients use to reach this server, e.g. behind a proxy (env CLEVERAGENTS_PUBLIC_URL)',
    )
    .option(
      '--retention-days <days>',
      'delete finished tasks and idle sessions older than this (env CLEVERAGENTS_RETENTION_DAYS; default 30, 0 keeps everything)',
      intOption(0, 36500),
    )
    .option(
      '--retention-max-tasks <n>',
      'keep at most this many finished tasks (env CLEVERAGENTS_RETENTION_MAX_TASKS; default 0: no limit)',
      intOption(0),
    );
  usageLimitOptions(command);
  oidcOptions(command);
  deploymentOptions(command);
  telemetryOptions(command);
  operationOptions(command);
  command
    // The CLI's own handshake with the agent it spawns early: not for people, so not in the help.
    .addOption(new Option('--await-client').hideHelp())
    .addHelpText(
      'after',
      '\nThe server token comes from --token, else CLEVERAGENTS_SERVER_TOKEN, else one is\ngenerated and stored in the data dir. Start-up problems (a bad token, a port in\nuse, an unwritable data dir, …) exit with code 2.\n\nPer-user limits apply in server mode only; a server administrator overrides them\nper namespace with `agents namespace limits <namespace>`. Over a limit a request\ngets HTTP 429 with Retry-After.',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = serveOptionsOf(cmd.optsWithGlobals<ServeFlags>());
      try {
        status.exitCode = await serve(opts);
      } catch (err) {
        await status.serveFailed(cmd, err, opts.stdio);
      }
    });
}

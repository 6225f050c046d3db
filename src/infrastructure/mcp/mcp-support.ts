/** Small pieces the MCP connection needs: why something stopped, time limits, and the connect errors. */
import { McpUnavailable } from '../../application/index.ts';
import type { McpServer } from '../../domain/registry/skill.definition.ts';
import { redact } from '../../domain/secrets.ts';

/** Why a request was stopped by us (the abort reason of its signal). */
export class Halt extends Error {
  readonly kind: 'timeout' | 'cancelled' | 'closed' | 'lost';

  constructor(kind: 'timeout' | 'cancelled' | 'closed' | 'lost') {
    super(kind);
    this.kind = kind;
    this.name = 'Halt';
  }
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Lets pending I/O callbacks (a child's last stderr bytes) run first. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `20 s`, `0.5 s`. */
export const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`;

/** Whether the promise settled within `ms` (it is never rejected from here). */
export async function settled(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The promise, or a rejection with the signal's reason as soon as it aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as unknown);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as unknown);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e: unknown) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}

export function exitText(exit: ExitInfo | undefined): string {
  if (!exit) return 'exited';
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;
}

/** The URL without its query and credentials (they may hold tokens). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

const withTail = (text: string, tail: string): string => (tail ? `${text}: ${tail}` : text);

export interface FailureFacts {
  kind: 'cwd' | 'timeout' | 'closed' | 'exited' | 'failed';
  error?: unknown;
  exit?: ExitInfo | undefined;
  stderr?: string;
  timeoutMs?: number;
  secrets?: string[];
}

/** Why a server could not be used, as McpUnavailable naming the server, with a hint. */
export function connectFailure(server: McpServer, facts: FailureFacts): McpUnavailable {
  const name = `mcp server ${server.name}`;
  const secrets = facts.secrets ?? [];
  const tail = redact((facts.stderr ?? '').trim(), secrets);
  const err = facts.error;
  const message = redact(err instanceof Error ? err.message : String(err), secrets);
  const stdio = 'command' in server;
  const where = stdio ? `\`${[server.command, ...(server.args ?? [])].join(' ')}\`` : displayUrl(server.url);
  const make = (text: string, hint: string): McpUnavailable => new McpUnavailable(server.name, text, hint);

  switch (facts.kind) {
    case 'cwd':
      return make(
        `${name} cannot start: its working directory ${stdio ? server.cwd : ''} does not exist`,
        "fix `cwd` in the skill's mcpServers entry",
      );
    case 'closed':
      return make(`${name}: the MCP hub was closed`, 'the agent is shutting down');
    case 'timeout':
      return make(
        withTail(
          `${name} did not get ready within ${seconds(facts.timeoutMs ?? 0)} (start, initialize, list tools)`,
          tail,
        ),
        stdio
          ? `check that ${where} starts an MCP server on stdio, or raise connectTimeoutSeconds`
          : `check that ${where} is a streamable-HTTP MCP endpoint, or raise connectTimeoutSeconds`,
      );
    case 'exited':
      return make(
        withTail(`${name} ${exitText(facts.exit)} before it was ready`, tail),
        `run ${where} by hand to see why`,
      );
    case 'failed':
      break;
  }
  if (stdio) {
    const code = (err as { code?: unknown } | undefined)?.code;
    if (code === 'ENOENT')
      return make(
        `${name} could not be started: command "${server.command}" was not found`,
        'install it, or give its absolute path (the server sees only PATH, HOME, LOGNAME, SHELL, TERM and USER, plus its env)',
      );
    if (code === 'EACCES')
      return make(`${name} could not be started: "${server.command}" is not executable`, 'check its file mode');
    return make(withTail(`${name} could not be started: ${message}`, tail), `run ${where} by hand to see why`);
  }
  const status = (err as { code?: unknown } | undefined)?.code;
  if (status === 401 || status === 403)
    return make(`${name} at ${where} refused the connection (HTTP ${status})`, 'check its headers (Authorization)');
  if (typeof status === 'number' && status >= 400)
    return make(`${name} at ${where} answered HTTP ${status}: ${message}`, 'check the URL of the MCP endpoint');
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  const causeText = cause instanceof Error ? `: ${redact(cause.message, secrets)}` : '';
  return make(`${name} at ${where} could not be reached: ${message}${causeText}`, 'is the server running at that URL?');
}

/** Values that must not appear in a message: header values, secret-looking env values, URL credentials. */
export function secretsOf(server: McpServer): string[] {
  if ('command' in server)
    return Object.entries(server.env ?? {})
      .filter(([k]) => /key|token|secret|pass|auth|cred|cookie|session/i.test(k))
      .map(([, v]) => v);
  const out = Object.values(server.headers ?? {});
  try {
    const url = new URL(server.url);
    if (url.password) out.push(decodeURIComponent(url.password));
    for (const v of url.searchParams.values()) out.push(v);
  } catch {
    // the schema checked the URL
  }
  return out;
}

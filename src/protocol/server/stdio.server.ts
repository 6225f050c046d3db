import type { Readable, Writable } from 'node:stream';
import { LOCAL_PRINCIPAL, type Logger, type Principal } from '../../application/index.ts';
import { AppError } from '../../domain/errors.ts';
import type { AgentCardProvider } from '../a2a/agent-card.ts';
import { InitializeParams, STDIO_METHODS, type StreamEventParams } from '../a2a/stdio-binding.ts';
import {
  EXTENSION_URI,
  parseExtensionVersion,
  parseVersion,
  SUPPORTED_VERSIONS,
  type ProtocolVersion,
} from '../a2a/versions.ts';
import { checkEnvelope, resultText, type JsonRpcId, type JsonRpcResponse } from '../jsonrpc/envelope.ts';
import { invalidRequest, newCorrelationId, toErrorObject, validationError } from '../jsonrpc/jsonrpc.errors.ts';
import { createLineFramer, frame } from '../jsonrpc/framing.ts';
import { logAccess, noteResponse, type AccessRecord } from './access-log.ts';
import type { DispatchOutcome, Dispatcher } from './dispatcher.ts';
import { NO_REQUEST_TELEMETRY, takeTraceparent, type RequestTelemetry } from './request-telemetry.ts';

export interface StdioServerOptions {
  dispatcher: Dispatcher;
  card: AgentCardProvider;
  logger: Logger;
  serverInfo: { name: string; version: string };
  input: Readable;
  output: Writable;
  /** Who every request comes from (default: the local user); a function is asked per request. */
  principal?: Principal | (() => Promise<Principal>);
  maxLineBytes?: number;
  /** Spans and request metrics (default: none). */
  telemetry?: RequestTelemetry | undefined;
}

/**
 * A2A JSON-RPC over stdio (DESIGN.md §3.5): one message per line; `initialize` first; stream
 * events as `_cleveragents/stream/event` notifications then one final response; `$/cancelRequest`
 * stops a request; the server ends when its input closes.
 */
export class A2aStdioServer {
  private version: ProtocolVersion | undefined;
  private extensionVersion: string | undefined;
  private readonly inflight = new Map<string, LazyAbort>();
  private readonly pending = new Set<Promise<void>>();
  private ended = false;
  private corked = false;
  private readonly principal: Principal | (() => Promise<Principal>);
  readonly done: Promise<void>;

  private readonly opts: StdioServerOptions;

  constructor(opts: StdioServerOptions) {
    this.opts = opts;
    this.principal = opts.principal ?? LOCAL_PRINCIPAL;
    const framer = createLineFramer(
      (line) => this.track(this.onLine(line)),
      (bytes) =>
        this.write({
          jsonrpc: '2.0',
          id: null,
          error: toErrorObject(
            invalidRequest(`message of ${bytes} bytes exceeds the ${this.maxLine} byte limit`),
            'extension',
            newCorrelationId(),
          ),
        }),
      this.maxLine,
    );
    // The client closing its end of our output (EPIPE) is a departure, not a crash.
    opts.output.on('error', (err: unknown) => {
      opts.logger.debug({ err }, 'stdio output closed');
      opts.input.destroy();
    });
    this.done = new Promise((resolve) => {
      opts.input.on('data', (c: Buffer) => framer.push(c));
      opts.input.on('end', () => {
        framer.flush();
        resolve(this.shutdown());
      });
      opts.input.on('error', () => resolve(this.shutdown()));
      // Destroyed (e.g. after the output broke) without an end.
      opts.input.on('close', () => resolve(this.shutdown()));
    });
  }

  private get maxLine(): number {
    return this.opts.maxLineBytes ?? 16 * 1024 * 1024;
  }

  private async shutdown(): Promise<void> {
    this.ended = true;
    for (const c of this.inflight.values()) c.abort();
    await Promise.allSettled([...this.pending]);
  }

  private track(p: Promise<void>): void {
    // Every line has this owner: whatever a request's handling throws is logged and answered
    // here, never left to reach the process.
    const owned = p.catch((err: unknown) => {
      const correlationId = newCorrelationId();
      this.opts.logger.error({ err, correlationId }, 'stdio request failed');
      this.write({ jsonrpc: '2.0', id: null, error: toErrorObject(err, 'extension', correlationId) });
    });
    this.pending.add(owned);
    void owned.finally(() => this.pending.delete(owned));
  }

  private async onLine(line: string): Promise<void> {
    const read = this.opts.dispatcher.read(line, 'extension');
    if (!read.ok) return this.write(read.response);
    const msg = read.message;
    const env = checkEnvelope(msg);
    if (env.ok && env.request.method === STDIO_METHODS.cancel) return this.cancel(env.request.params);
    if (env.ok && env.request.method === STDIO_METHODS.initialize)
      return this.initialize(env.request.id ?? null, env.request.params);
    if (env.ok && this.version === undefined) {
      if (env.request.id === undefined) return;
      return this.fail(
        env.request.id,
        invalidRequest(`send ${STDIO_METHODS.initialize} first (the handshake negotiates the protocol version)`),
      );
    }
    const key = env.ok && env.request.id !== undefined ? keyOf(env.request.id) : undefined;
    const abort = new LazyAbort();
    if (key !== undefined) this.inflight.set(key, abort);
    const started = performance.now();
    // Stdio has no headers: a client's trace context comes as `params._meta.traceparent`.
    const observed = (this.opts.telemetry ?? NO_REQUEST_TELEMETRY).begin(
      'stdio',
      env.ok ? takeTraceparent(env.request.params) : undefined,
      env.ok ? env.request.method : undefined,
    );
    const rec: AccessRecord = {
      transport: 'stdio',
      method: env.ok ? env.request.method : undefined,
      principal: typeof this.principal === 'function' ? undefined : this.principal.id,
      outcome: 'ok',
      ms: 0,
      correlationId: undefined,
    };
    try {
      const principal = typeof this.principal === 'function' ? await this.principal() : this.principal;
      rec.principal = principal.id;
      const outcome = await observed.run(() =>
        this.opts.dispatcher.dispatch(msg, {
          principal,
          version: this.version,
          get signal() {
            return abort.signal;
          },
          extensionVersion: this.extensionVersion,
        }),
      );
      if (outcome.kind !== 'notification') rec.correlationId = outcome.correlationId;
      if (outcome.kind === 'response') {
        noteResponse(rec, outcome.response);
        if (outcome.resultJson !== undefined)
          return this.send(`${resultText(outcome.response.id, outcome.resultJson)}\n`);
        return this.write(outcome.response);
      }
      if (outcome.kind === 'notification') return;
      await this.stream(outcome, rec, abort);
    } finally {
      if (key !== undefined) this.inflight.delete(key);
      // Logs go to stderr (the logger's destination); stdout carries protocol only.
      logAccess(this.opts.logger, rec, started);
      observed.end(rec);
    }
  }

  /**
   * A stream's events as notifications, each with its sequence number, then one final response:
   * the stream's error, a cancellation, or how many events were sent.
   */
  private async stream(
    outcome: Extract<DispatchOutcome, { kind: 'stream' }>,
    rec: AccessRecord,
    abort: LazyAbort,
  ): Promise<void> {
    let count = 0;
    let lastSeq = 0;
    for await (const ev of outcome.events) {
      if (this.ended) break;
      if ('error' in ev.response) {
        noteResponse(rec, ev.response);
        return this.write(ev.response);
      }
      count++;
      lastSeq = ev.seq;
      if (ev.resultJson !== undefined) {
        // What frame() writes for the notification below, with the event already serialised.
        this.send(
          `{"jsonrpc":"2.0","method":"${STDIO_METHODS.streamEvent}","params":{"requestId":${JSON.stringify(outcome.id)},"seq":${ev.seq},"event":${ev.resultJson}}}\n`,
        );
        continue;
      }
      this.write({
        jsonrpc: '2.0',
        method: STDIO_METHODS.streamEvent,
        params: { requestId: outcome.id, seq: ev.seq, event: ev.response.result } satisfies StreamEventParams,
      });
    }
    if (abort.aborted) {
      rec.outcome = 'cancelled';
      return this.fail(
        outcome.id,
        new AppError('UNSUPPORTED_OPERATION', 'request cancelled by the client', { details: { cancelled: true } }),
      );
    }
    this.write({ jsonrpc: '2.0', id: outcome.id, result: { done: true, events: count, lastSeq } });
  }

  private initialize(id: JsonRpcId, params: unknown): void {
    const p = InitializeParams.safeParse(params ?? {});
    if (!p.success) return this.fail(id, validationError(p.error.issues));
    let version: ProtocolVersion;
    try {
      version = parseVersion(p.data.protocolVersion) ?? '1.0';
    } catch (err) {
      // The same VersionNotSupported (-32009) an HTTP caller gets for an unknown A2A-Version.
      return this.write({ jsonrpc: '2.0', id, error: toErrorObject(err, 'a2a-v1', newCorrelationId()) });
    }
    this.version = version;
    this.extensionVersion = p.data.extensionVersion;
    let extensionVersion: string | undefined;
    try {
      extensionVersion = parseExtensionVersion(p.data.extensionVersion);
    } catch {
      // Not activated: extension methods then answer -32007 (no fallback to another version).
    }
    const extensions = extensionVersion ? (p.data.extensions ?? []).filter((e) => e === EXTENSION_URI) : [];
    this.write({
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: version,
        supportedVersions: [...SUPPORTED_VERSIONS],
        extensions,
        ...(extensionVersion ? { extensionVersion } : {}),
        serverInfo: this.opts.serverInfo,
        agentCard: this.opts.card.publicCard(version).card,
      },
    });
  }

  private cancel(params: unknown): void {
    const id = (params as { id?: unknown } | undefined)?.id;
    if (typeof id === 'string' || typeof id === 'number') this.inflight.get(keyOf(id))?.abort();
  }

  private fail(id: JsonRpcId, err: unknown): void {
    this.write({ jsonrpc: '2.0', id, error: toErrorObject(err, 'extension', newCorrelationId()) });
  }

  private write(msg: JsonRpcResponse | { jsonrpc: '2.0'; method: string; params: unknown }): void {
    if (!this.opts.output.writable) return;
    let line: string;
    try {
      line = frame(msg);
    } catch (err) {
      // A result that cannot be serialised (e.g. nested past the stack): its request still gets
      // an answer, and the connection goes on.
      const correlationId = newCorrelationId();
      this.opts.logger.error({ err, correlationId }, 'stdio message could not be sent');
      const id = 'id' in msg ? msg.id : null;
      line = frame({ jsonrpc: '2.0', id, error: toErrorObject(err, 'extension', correlationId) });
    }
    this.send(line);
  }

  /** Writes one framed line. */
  private send(line: string): void {
    const out = this.opts.output;
    if (!out.writable) return;
    // Messages written in the same tick leave in one write (stdout pipes write synchronously, one
    // system call per message otherwise).
    if (!this.corked) {
      this.corked = true;
      out.cork();
      process.nextTick(() => {
        this.corked = false;
        out.uncork();
      });
    }
    out.write(line);
  }
}

const keyOf = (id: JsonRpcId): string => `${typeof id}:${String(id)}`;

/**
 * An AbortController made only when someone asks for its signal (streams do, most requests never
 * look): one per request was a visible cost of a stdio round trip.
 */
class LazyAbort {
  private controller: AbortController | undefined;
  private cancelled = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort();
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.cancelled;
  }

  abort(): void {
    this.cancelled = true;
    this.controller?.abort();
  }
}

import type { Logger, Principal, ServiceFacade } from '../../application/index.ts';
import { AppError } from '../../domain/errors.ts';
import { JsonText } from '../../domain/json.ts';
import { DEFAULT_LIMITS, depthError, jsonDepthExceeds } from '../../domain/limits.ts';
import { retryAfterOf } from '../../domain/quota.ts';
import type { AgentCardProvider } from '../a2a/agent-card.ts';
import type { CallContext, MethodDef } from '../a2a/method.ts';
import type { MethodLookup } from '../a2a/method-table.ts';
import { normaliseProtoNames } from '../a2a/proto-names.ts';
import { EXTENSION_VERSION_HEADER, parseExtensionVersion, servedIn, type ProtocolVersion } from '../a2a/versions.ts';
import { checkEnvelope, type JsonRpcId, type JsonRpcResponse } from '../jsonrpc/envelope.ts';
import {
  invalidRequest,
  methodNotFound,
  parseError,
  RpcError,
  toErrorObject,
  validationError,
  type ErrorSurface,
} from '../jsonrpc/jsonrpc.errors.ts';
import { authorize } from './authorize.ts';
import { correlationIdNow } from './request-origin.ts';
import { ResponseStream, TextResponse, type StreamEvent, type StreamSourceItem } from './dispatch-responses.ts';

export interface RequestMeta {
  /** Already authenticated by the transport. */
  principal: Principal;
  /** The version the caller stated (header, query or handshake); undefined when it stated none. */
  version?: ProtocolVersion | undefined;
  signal: AbortSignal;
  lastEventSeq?: number | undefined;
  /** The extension version the caller asked for (raw; undefined: the current one). */
  extensionVersion?: string | undefined;
  /** The client's address, for the audit log (HTTP). */
  client?: string | undefined;
}

/**
 * `correlationId`: the request's (an error's `error.data.correlationId`), for the access log.
 * `resultJson`: `response.result` as JSON text, when the result came as text (see JsonText): a
 * transport writes it into its frame instead of serialising the result.
 */
export type DispatchOutcome =
  | {
      kind: 'response';
      response: JsonRpcResponse;
      resultJson?: string;
      correlationId?: string;
      /** Refused over a per-user limit: when to try again (HTTP answers 429 with Retry-After). */
      retryAfterSeconds?: number;
    }
  | { kind: 'notification' }
  | { kind: 'stream'; id: JsonRpcId; events: AsyncIterable<StreamEvent>; correlationId?: string };

export interface DispatcherOptions {
  facade: ServiceFacade;
  card: AgentCardProvider;
  table: MethodLookup;
  logger: Logger;
  /** Check every result against the method's result schema (tests turn this on). */
  validateResults?: boolean;
  /** Deepest nesting a request may have (default {@link DEFAULT_LIMITS}.maxJsonDepth). */
  maxJsonDepth?: number;
  /** Counts each authorized request against its caller's requests per minute (absent: no limit). */
  admission?: RequestAdmission | undefined;
}

/** What may refuse a request over its caller's rate limit (QuotaService). */
export interface RequestAdmission {
  admitRequest(principal: Principal): void | Promise<void>;
}

/** A message read from the wire: the parsed request, or the answer that refuses it. */
export type ReadMessage = { ok: true; message: unknown } | { ok: false; response: JsonRpcResponse };

/**
 * The JSON-RPC pipeline, in one place: parse (-32700) and the batch rule ({@link read}) → envelope
 * (-32600) → version → lookup (-32601) → authorize → params (-32602) → call → encode → (optionally)
 * result check → error mapping. The transports only frame: they hand over a message's text and
 * write back what comes out; authenticating the caller is theirs too (it is in the frame: a header).
 */
export class Dispatcher {
  private readonly maxDepth: number;

  private readonly opts: DispatcherOptions;

  constructor(opts: DispatcherOptions) {
    this.opts = opts;
    this.maxDepth = opts.maxJsonDepth ?? DEFAULT_LIMITS.maxJsonDepth;
  }

  /**
   * A message's text as a request: unparseable JSON is -32700, a batch (an array) is refused with
   * -32600 — one request per message — both in the error format of `surface`.
   */
  read(text: string, surface: ErrorSurface): ReadMessage {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (err) {
      return this.refusal(parseError(err instanceof Error ? err.message : 'unreadable'), surface);
    }
    if (Array.isArray(message))
      return this.refusal(invalidRequest('batch requests are not supported; send one request per message'), surface);
    return { ok: true, message };
  }

  private refusal(err: RpcError, surface: ErrorSurface): ReadMessage {
    return {
      ok: false,
      response: { jsonrpc: '2.0', id: null, error: toErrorObject(err, surface, correlationIdNow()) },
    };
  }

  async dispatch(message: unknown, meta: RequestMeta): Promise<DispatchOutcome> {
    // Over HTTP the request's id (one id per request, in the log and the answer); else a new one.
    const correlationId = correlationIdNow();
    const env = checkEnvelope(message);
    if (!env.ok)
      return this.failure(
        env.id,
        invalidRequest(env.problem),
        meta.version === '1.0' ? 'a2a-v1' : 'extension',
        correlationId,
      );
    const { request } = env;
    const id = request.id ?? null;
    const notification = request.id === undefined;

    const { version, method: found } = this.lookup(request.method, meta.version);
    const surface: ErrorSurface =
      found?.surface === 'extension' ? 'extension' : version === '1.0' ? 'a2a-v1' : 'a2a-v03';
    try {
      const { method, principal } = this.admit(request.method, request.params, meta, version, found);
      // After authorize, so the limits are those of the namespace the request acts in.
      const admitted = this.opts.admission?.admitRequest(principal);
      if (admitted) await admitted;
      const codec = version === '0.3' && method.surface === 'a2a' ? method.v03 : undefined;
      const params = this.parseParams(method, codec, withoutTenant(method, request.params));
      const ctx: CallContext = {
        principal,
        version,
        // Read through: a transport may make the signal only when it is asked for.
        get signal() {
          return meta.signal;
        },
        correlationId,
        card: this.opts.card,
        lastEventSeq: meta.lastEventSeq,
      };
      return await this.call(method, params, ctx, { id, notification, codec, surface, meta });
    } catch (err) {
      if (notification) return { kind: 'notification' };
      return this.failure(id, this.forCaller(err, meta.principal), surface, correlationId);
    }
  }

  /** Runs the method and builds its answer: a stream, JSON text as it came, or the (encoded) result. */
  private async call(
    method: MethodDef,
    params: unknown,
    ctx: CallContext,
    at: { id: JsonRpcId; notification: boolean; codec: MethodDef['v03']; surface: ErrorSurface; meta: RequestMeta },
  ): Promise<DispatchOutcome> {
    const { id, notification, codec, surface } = at;
    const { correlationId } = ctx;
    const encode = codec ? (codec.encode as (r: unknown) => unknown) : undefined;

    if (method.kind === 'stream') {
      const items = await method.call(this.opts.facade, params, ctx);
      if (notification) return { kind: 'notification' };
      return {
        kind: 'stream',
        id,
        events: this.streamEvents(id, items, method, encode, surface, at.meta.signal),
        correlationId,
      };
    }
    const answer = await method.call(this.opts.facade, params, ctx);
    if (notification) return { kind: 'notification' };
    // JSON text goes out as it is when nothing encodes it; a check, or anything that reads
    // `response.result` (the in-memory transport), parses it, once.
    const text: JsonText<unknown> | undefined = answer instanceof JsonText ? answer : undefined;
    if (text && !encode) {
      if (this.opts.validateResults) this.checkResult(method, text.value);
      return { kind: 'response', response: new TextResponse(id, text), resultJson: text.json, correlationId };
    }
    const result: unknown = text ? text.value : answer;
    if (this.opts.validateResults && !codec) this.checkResult(method, result);
    return {
      kind: 'response',
      response: { jsonrpc: '2.0', id, result: encode ? encode(result) : result },
      correlationId,
    };
  }

  /**
   * Lookup, depth, authorize and extension version, in that order: the caller the method runs for,
   * or the refusal (-32601 for a name this version does not serve).
   */
  private admit(
    name: string,
    params: unknown,
    meta: RequestMeta,
    version: ProtocolVersion,
    method: MethodDef | undefined,
  ): { method: MethodDef; principal: Principal } {
    const { v1, v03 } = this.opts.table;
    if (!method) {
      const other = (version === '1.0' ? v03 : v1).get(name);
      throw methodNotFound(
        name,
        other
          ? `${name} is an A2A ${version === '1.0' ? '0.3' : '1.0'} name; send A2A-Version: ${version === '1.0' ? '0.3' : '1.0'} or use ${other.name}`
          : undefined,
      );
    }
    // Before anything walks the params (validation, storage, serialisation recurse): a request
    // nested thousands deep overflowed the stack of the first recursive reader.
    if (jsonDepthExceeds(params, this.maxDepth - 1)) throw depthError(this.maxDepth);
    const principal = this.authorize(meta, method, params);
    if (method.surface === 'extension') {
      const ext = parseExtensionVersion(meta.extensionVersion);
      if (!servedIn(method.since, ext)) {
        throw methodNotFound(
          name,
          `${name} was added in extension version ${method.since}; send ${EXTENSION_VERSION_HEADER}: ${method.since}`,
        );
      }
    }
    return { method, principal };
  }

  /** An error as its caller may read it: on a server, the server's own directories by label only. */
  private forCaller(err: unknown, principal: Principal | undefined): unknown {
    if (!(err instanceof AppError)) return err;
    const redact = (t: string): string => this.opts.facade.capabilities.redactFor(t, principal);
    const message = redact(err.message);
    const hint = err.hint === undefined ? undefined : redact(err.hint);
    if (message === err.message && hint === err.hint) return err;
    return new AppError(err.reason, message, { details: err.details, hint, fields: err.fields, cause: err });
  }

  /** The authorize step; a refusal is written to the audit log (without waiting for it). */
  private authorize(meta: RequestMeta, method: MethodDef, params: unknown): Principal {
    try {
      return authorize(meta.principal, method, params);
    } catch (err) {
      if (err instanceof AppError && (err.reason === 'FORBIDDEN' || err.reason === 'NOT_FOUND')) {
        const details = err.details;
        void this.opts.facade.audit.record({
          event: 'request.refused',
          by: meta.principal,
          outcome: 'refused',
          target: method.name,
          namespace:
            typeof details['namespace'] === 'string'
              ? details['namespace']
              : typeof details['name'] === 'string'
                ? details['name']
                : undefined,
          details: { reason: err.reason, permission: method.permission },
          client: meta.client,
        });
      }
      throw err;
    }
  }

  /**
   * Whether a message asks for a streaming method (its row says so): a transport that frames
   * streams its own way (SSE) answers even the stream's errors in that framing.
   */
  isStreamingRequest(message: unknown, version: ProtocolVersion | undefined): boolean {
    const name = (message as { method?: unknown } | null)?.method;
    return typeof name === 'string' && this.lookup(name, version).method?.kind === 'stream';
  }

  /** The row a name reaches in the version the caller stated (or, stating none, implied). */
  private lookup(
    name: string,
    stated: ProtocolVersion | undefined,
  ): { version: ProtocolVersion; method: MethodDef | undefined } {
    const { v1, v03 } = this.opts.table;
    // The spec reads a missing version as 0.3; names only v1.0 has imply 1.0.
    const version: ProtocolVersion = stated ?? (v03.has(name) ? '0.3' : '1.0');
    return { version, method: (version === '1.0' ? v1 : v03).get(name) };
  }

  private parseParams(method: MethodDef, codec: MethodDef['v03'], raw: unknown): unknown {
    if (Array.isArray(raw))
      throw new AppError('INVALID_PARAMS', 'Invalid parameters: params must be an object (by-name), not an array', {
        fields: [{ field: '(params)', description: 'must be an object' }],
      });
    const input = raw ?? {};
    if (codec) {
      const parsed = codec.params.safeParse(input);
      if (!parsed.success) throw validationError(parsed.error.issues);
      const decoded = (codec.decode as (p: unknown) => unknown)(parsed.data);
      const again = method.params.safeParse(decoded);
      if (!again.success) throw validationError(again.error.issues);
      return again.data;
    }
    const parsed = method.params.safeParse(method.proto ? normaliseProtoNames(method.proto, input) : input);
    if (!parsed.success) throw validationError(parsed.error.issues);
    return parsed.data;
  }

  private streamEvents(
    id: JsonRpcId,
    items: AsyncIterable<StreamSourceItem>,
    method: MethodDef,
    encode: ((r: unknown) => unknown) | undefined,
    surface: ErrorSurface,
    signal: AbortSignal,
  ): AsyncIterable<StreamEvent> {
    const check = this.opts.validateResults && surface !== 'a2a-v03';
    return new ResponseStream(
      id,
      items[Symbol.asyncIterator](),
      signal,
      // Without a codec the result is the payload itself, so its JSON (when it came with one) is the result's.
      !encode,
      (payload) => {
        if (check) this.checkResult(method, payload);
        return encode ? encode(payload) : payload;
      },
      (err) => {
        const correlationId = correlationIdNow();
        this.log(err, correlationId);
        return toErrorObject(err, surface, correlationId);
      },
    );
  }

  private checkResult(method: MethodDef, result: unknown): void {
    const r = method.result.safeParse(result);
    if (!r.success) {
      throw new Error(
        `result of ${method.name} does not match its schema: ${JSON.stringify(r.error.issues).slice(0, 500)}`,
      );
    }
  }

  private failure(id: JsonRpcId, err: unknown, surface: ErrorSurface, correlationId: string): DispatchOutcome {
    this.log(err, correlationId);
    const retryAfterSeconds = retryAfterOf(err);
    return {
      kind: 'response',
      response: { jsonrpc: '2.0', id, error: toErrorObject(err, surface, correlationId) },
      correlationId,
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    };
  }

  private log(err: unknown, correlationId: string): void {
    if (err instanceof AppError && err.reason !== 'INTERNAL') return;
    if (err instanceof RpcError) return;
    this.opts.logger.error({ err, correlationId }, 'request failed');
  }
}

/**
 * Every method takes a `tenant` (the namespace it acts in): standard ones declare it in their
 * params; for extension methods it is the authorize step's alone, taken off before validation.
 */
function withoutTenant(method: MethodDef, raw: unknown): unknown {
  if (method.surface !== 'extension' || !raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  if (!('tenant' in raw)) return raw;
  const { tenant: _tenant, ...rest } = raw as Record<string, unknown>;
  return rest;
}

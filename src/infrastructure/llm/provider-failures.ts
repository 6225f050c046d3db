/**
 * What went wrong with a model step, for a user: the SDK's errors (APICallError with status, headers
 * and body; fetch's network errors; error events inside a stream) mapped to ProviderFailure with a
 * message saying what happened and a hint saying what to do. The key never appears in either.
 */
import type { ActorDefinition } from '../../domain/registry/actor.definition.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import { ProviderFailure, type ProviderFailureKind } from '../../application/index.ts';
import { egressRefusalOf } from '../net/egress-guard.ts';

/** How endpoints say the prompt is too long: OpenAI, vLLM, Anthropic, llama.cpp, Ollama. */
const CONTEXT_WINDOW =
  /context_length_exceeded|maximum context length|context length|context window|context size|prompt is too long|prompt too long|too many tokens|exceeds the (?:available )?context|n_ctx|input is too long/i;

/** A failure with what retrying needs to know. */
export interface Classified {
  failure: ProviderFailure;
  retryable: boolean;
  /** The wait the endpoint asked for (Retry-After / retry-after-ms), in ms. */
  retryAfterMs?: number | undefined;
}

/** An error the endpoint sent inside the stream (Anthropic `event: error`, an OpenAI error chunk, an unreadable chunk). */
export function streamError(error: unknown, actor: ActorDefinition): ProviderFailure {
  const e = (error ?? {}) as { type?: unknown; code?: unknown; message?: unknown; name?: unknown };
  const type = typeof e.type === 'string' ? e.type : typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : String(error);
  if (error instanceof Error && /JSONParseError|TypeValidationError|InvalidResponseDataError/.test(error.name))
    return new ProviderFailure(
      'protocol',
      `the endpoint sent an unreadable answer: ${short(message)}`,
      'is baseUrl an OpenAI-compatible or Anthropic endpoint?',
    );
  const kind: ProviderFailureKind = /overloaded|server_error|api_error/.test(type)
    ? 'server'
    : /rate_limit/.test(type)
      ? 'rate-limit'
      : CONTEXT_WINDOW.test(message)
        ? 'context-window'
        : /authentication|permission/.test(type)
          ? 'auth'
          : type === ''
            ? 'protocol'
            : 'bad-request';
  return new ProviderFailure(
    kind,
    `the endpoint failed mid-answer: ${short(message)}${type ? ` (${type})` : ''}`,
    kind === 'context-window' ? contextHint(actor) : 'try again; if it persists, check the provider status',
  );
}

export function classify(
  err: unknown,
  timedOut: boolean,
  actor: ActorDefinition,
  baseUrl: string,
  timeoutMs: number,
): Classified {
  // an error event in the stream: worth another attempt when it says overloaded or rate-limited
  if (err instanceof ProviderFailure)
    return { failure: err, retryable: err.kind === 'server' || err.kind === 'rate-limit' };
  // The egress guard refused the connection: the same answer on every attempt, so none is retried.
  const refused = egressRefusal(err);
  if (refused)
    return {
      failure: new ProviderFailure('network', `cannot reach ${baseUrl}: ${refused.message}`, refused.hint),
      retryable: false,
    };
  if (timedOut)
    return {
      failure: new ProviderFailure(
        'timeout',
        `${baseUrl} sent nothing for ${timeoutMs / 1000} s (model ${actor.model})`,
        `try again, or raise timeoutSeconds of ${actor.name}`,
      ),
      retryable: false,
    };
  const e = err as ApiCallError;
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status === undefined || (status >= 200 && status < 300)) return withoutAnswer(err, e, status, actor, baseUrl);
  return refusal(e, status, actor, baseUrl);
}

/** The fields of the SDK's APICallError that say what the endpoint answered. */
interface ApiCallError {
  name?: unknown;
  statusCode?: unknown;
  responseHeaders?: Record<string, string>;
  responseBody?: unknown;
  message?: unknown;
}

/** No error status: no API key, no connection, or an answer that could not be read. */
function withoutAnswer(
  err: unknown,
  e: ApiCallError,
  status: number | undefined,
  actor: ActorDefinition,
  baseUrl: string,
): Classified {
  if (e.name === 'AI_LoadAPIKeyError')
    return { failure: new ProviderFailure('auth', 'no API key was given', keyHint(actor)), retryable: false };
  const reason = networkReason(err);
  if (status !== undefined && reason !== 'connection cut')
    return {
      failure: new ProviderFailure(
        'protocol',
        `the answer of ${baseUrl} could not be read: ${reason}`,
        'is baseUrl an OpenAI-compatible or Anthropic endpoint?',
      ),
      retryable: false,
    };
  return {
    failure: new ProviderFailure(
      'network',
      `cannot reach ${baseUrl}: ${reason}`,
      reason === 'connection cut' ? 'try again' : 'is the server running?',
    ),
    retryable: true,
  };
}

/** The endpoint answered with an error status: what it said, mapped to a failure and whether to retry. */
function refusal(e: ApiCallError, status: number, actor: ActorDefinition, baseUrl: string): Classified {
  const body = typeof e.responseBody === 'string' ? e.responseBody : '';
  const said = providerMessage(body) ?? (typeof e.message === 'string' ? e.message : '');
  const with_ = said ? `: ${short(said)}` : '';
  const final = (kind: ProviderFailureKind, message: string, hint: string): Classified => ({
    failure: new ProviderFailure(kind, message, hint, status),
    retryable: false,
  });
  // Worth another attempt, after the wait the endpoint asked for.
  const passing = (kind: ProviderFailureKind, message: string, hint: string): Classified => ({
    failure: new ProviderFailure(kind, message, hint, status),
    retryable: true,
    retryAfterMs: retryAfter(e.responseHeaders ?? {}),
  });
  if (status === 401 || status === 403)
    return final('auth', `the endpoint refused the API key (${status})`, keyHint(actor));
  if (status === 429)
    return passing(
      'rate-limit',
      `the endpoint is rate-limiting requests (429)${with_}`,
      'wait a little and try again, or lower the request rate',
    );
  if (status >= 500)
    return passing(
      'server',
      `the endpoint failed (${status})${with_}`,
      'try again later; if it persists, check the provider status',
    );
  if (CONTEXT_WINDOW.test(body) || CONTEXT_WINDOW.test(said) || status === 413)
    return final(
      'context-window',
      `the prompt does not fit the context window of ${actor.model} (${status})${with_}`,
      contextHint(actor),
    );
  if (status === 404)
    return final(
      'model-not-found',
      `model ${actor.model} was not found at ${baseUrl} (404)${with_}`,
      `check the model name and baseUrl (agents actor show ${actor.name})`,
    );
  return final(
    'bad-request',
    `the endpoint refused the request (${status})${with_}`,
    `check the actor's settings (agents actor show ${actor.name})`,
  );
}

/** The provider's own message in an error body (OpenAI and Anthropic: error.message; some servers: message / error). */
export function providerMessage(body: string): string | undefined {
  if (body === '') return undefined;
  try {
    const j = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    if (j.error && typeof j.error === 'object') {
      const m = (j.error as { message?: unknown }).message;
      if (typeof m === 'string') return m;
    }
    if (typeof j.error === 'string') return j.error;
    if (typeof j.message === 'string') return j.message;
    if (typeof j.detail === 'string') return j.detail;
  } catch {
    // not JSON: the text itself
  }
  return short(body);
}

/** Retry-After (seconds or an HTTP date) or retry-after-ms, in ms. */
export function retryAfter(headers: Record<string, string>, now = Date.now()): number | undefined {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) h[k.toLowerCase()] = v;
  const ms = h['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const ra = h['retry-after'];
  if (ra === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Math.ceil(Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function tooLong(c: Classified, wait: number): ProviderFailure {
  const f = c.failure;
  const after = `try again in ${Math.ceil(wait / 1000)} s`;
  return new ProviderFailure(
    f.kind === 'network' ? 'network' : f.kind === 'server' ? 'server' : 'rate-limit',
    `${f.message}; the endpoint asks to wait ${Math.ceil(wait / 1000)} s, longer than this step may take`,
    after,
    f.status,
  );
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS)',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection cut',
  UND_ERR_SOCKET: 'connection cut',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate cannot be verified',
};

export function networkReason(err: unknown): string {
  for (let e: unknown = err, i = 0; e && i < 6; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES[code]) return NETWORK_CODES[code];
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors))
      for (const x of errors) {
        const c = (x as { code?: unknown }).code;
        if (typeof c === 'string' && NETWORK_CODES[c]) return NETWORK_CODES[c];
      }
    if (e instanceof Error && /^(terminated|other side closed)$/i.test(e.message)) return 'connection cut';
  }
  // no known code: the innermost cause says most ("fetch failed" wraps e.g. "bad port")
  let inner: unknown = err;
  for (let i = 0; i < 6 && (inner as { cause?: unknown } | undefined)?.cause instanceof Error; i++)
    inner = (inner as { cause: unknown }).cause;
  const m = inner instanceof Error ? inner.message : String(inner);
  if (m === 'bad port') return 'the port is one fetch refuses to use (bad port)';
  return short(m.replace(/^Cannot connect to API: /, ''));
}

/** The egress guard's refusal inside a failed request (its reason and what to do), if that is why it failed. */
export function egressRefusal(err: unknown): { message: string; hint: string } | undefined {
  const refused = egressRefusalOf(err);
  if (!refused) return undefined;
  return {
    message: refused.message,
    // The message already names the allowlist entry; the other way is the namespace's grant.
    hint: "or a server administrator may grant the actor's namespace private-network (agents namespace grant <namespace> private-network)",
  };
}

export function keyHint(actor: ActorDefinition): string {
  if (actor.apiKeyEnv) return `check the key in $${actor.apiKeyEnv} (apiKeyEnv of ${actor.name})`;
  if (actor.apiKeyFile) return `check the key in ${actor.apiKeyFile} (apiKeyFile of ${actor.name})`;
  if (actor.apiKeySecret)
    return `check the key in the secret ${actor.apiKeySecret} (apiKeySecret of ${actor.name}; agents secret set ${actor.apiKeySecret} --namespace ${namespaceOf(actor.name)})`;
  return `${actor.name} has no apiKeyEnv, apiKeyFile or apiKeySecret: set one (agents actor show ${actor.name})`;
}

function contextHint(actor: ActorDefinition): string {
  return `lower contextWindow of ${actor.name} to the model's real window, or start a new session`;
}

/** A provider may echo the key (OpenAI: "Incorrect API key provided: sk-..."): it never leaves in a failure. */
export function redact(err: unknown, key: string | undefined): unknown {
  if (!(err instanceof ProviderFailure)) return err;
  if (!key || key.length < 4 || (!err.message.includes(key) && !err.hint.includes(key))) return err;
  const clean = (s: string) => s.split(key).join('[key]');
  return new ProviderFailure(err.kind, clean(err.message), clean(err.hint), err.status);
}

export function cancelled(): ProviderFailure {
  return new ProviderFailure('cancelled', 'the model step was cancelled', 'nothing to do');
}

export function short(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 300 ? `${one.slice(0, 297)}...` : one;
}

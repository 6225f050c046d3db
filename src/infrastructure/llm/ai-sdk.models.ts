/**
 * LanguageModels through the Vercel AI SDK's provider packages: `@ai-sdk/openai-compatible` for the
 * `openai-compatible` and `openai` providers (/chat/completions), `@ai-sdk/anthropic` for
 * `anthropic` (/messages). One model step is the provider model's `doStream` (the SDK's provider
 * spec, v4: the AI SDK 7 line), not `streamText`: it streams each delta as it is read, hands over a
 * tool call's arguments as the raw text the model wrote (streamText parses them against a declared
 * tool set and repairs them), runs no tools and does no retries of its own, so retries, Retry-After
 * and the timeouts are this adapter's.
 *
 * The SDK packages are loaded with `import()` on first use: a process that runs no LLM actor never
 * loads them.
 */
import { actorEndpoint, LLM_ACTOR_DEFAULTS, type ActorDefinition } from '../../domain/registry/actor.definition.ts';
import {
  ProviderFailure,
  type EndpointAccess,
  type EndpointCheck,
  type LanguageModels,
  type ModelEvent,
  type ModelRequest,
} from '../../application/index.ts';
import { callOptions, toEvent, type ProviderModel } from './ai-sdk.mapping.ts';
import {
  cancelled,
  classify,
  egressRefusal,
  keyHint,
  networkReason,
  providerMessage,
  redact,
  short,
  tooLong,
} from './provider-failures.ts';

export interface AiSdkLanguageModelsOptions {
  /** The fetch the providers use where no guard applies (tests only; default the global fetch). */
  fetch?: typeof fetch;
  /**
   * Server mode: the egress guard's fetch (net/egress-guard.ts), used for every provider request
   * and check unless the request says the actor may reach private networks. Absent (local mode):
   * endpoints on loopback and private addresses are the user's own (their Ollama on 127.0.0.1).
   */
  guard?: { fetch: typeof fetch };
  /** The first retry's wait (doubled for each next one) when the endpoint names none. Default 1000. */
  retryBaseMs?: number;
}

/** Waits longer than this are never waited: the step fails and says when to try again. */
const MAX_RETRY_WAIT_MS = 60_000;
const CHECK_TIMEOUT_MS = 5_000;
/** Provider models kept for reuse (provider × endpoint × model, with the last key); the oldest goes first. */
const MAX_CACHED_MODELS = 64;

/** Why an attempt stopped, as seen by the attempt (the caller's abort, our timer, or the endpoint). */
class AttemptState {
  readonly controller = new AbortController();
  timedOut = false;
  /** The endpoint's answer was read to its end: nothing is left to abort. */
  finished = false;
  private timer: NodeJS.Timeout | undefined;

  private readonly timeoutMs: number;
  private readonly outer: AbortSignal;

  constructor(timeoutMs: number, outer: AbortSignal) {
    this.timeoutMs = timeoutMs;
    this.outer = outer;
    if (outer.aborted) this.controller.abort();
    else outer.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  private readonly onOuterAbort = () => this.controller.abort();

  /** (Re)starts the wait for the next thing from the endpoint. */
  arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
  }

  /** Stops the wait: the consumer's own time between events is not the endpoint's. */
  disarm(): void {
    clearTimeout(this.timer);
  }

  /** Rejects as soon as the attempt is aborted (whatever `p` does). */
  race<T>(pl: PromiseLike<T>): Promise<T> {
    const p = Promise.resolve(pl);
    const signal = this.controller.signal;
    if (signal.aborted) {
      p.catch(() => undefined);
      return Promise.reject(new AttemptAborted());
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(new AttemptAborted());
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.outer.removeEventListener('abort', this.onOuterAbort);
    // Aborting a finished request only costs (an AbortError and undici's teardown, every step).
    if (!this.finished) this.controller.abort();
  }
}

class AttemptAborted extends Error {}

/**
 * One attempt: the model's events as they come, each read under the attempt's timeout, and its
 * finish last. `sent.yielded` tells the caller whether any event went out (then it cannot retry).
 */
async function* streamAttempt(
  model: ProviderModel,
  options: ReturnType<typeof callOptions>,
  state: AttemptState,
  actor: ActorDefinition,
  baseUrl: string,
  sent: { yielded: boolean },
): AsyncGenerator<ModelEvent> {
  state.arm();
  const { stream } = await state.race(model.doStream({ ...options, abortSignal: state.controller.signal }));
  state.disarm();
  const reader = stream.getReader();
  try {
    let finish: ModelEvent | undefined;
    for (;;) {
      state.arm();
      const { done, value } = await state.race(reader.read());
      state.disarm();
      if (done) {
        state.finished = true;
        break;
      }
      const event = toEvent(value, actor);
      if (event === undefined) continue;
      if (event.type === 'finish') finish = event;
      else {
        sent.yielded = true;
        yield event;
      }
    }
    if (finish === undefined)
      throw new ProviderFailure(
        'protocol',
        `the answer of ${baseUrl} ended without a finish`,
        sent.yielded
          ? 'try again: the server, or a proxy before it, closed the answer before its end'
          : 'is baseUrl an OpenAI-compatible or Anthropic endpoint?',
      );
    yield finish;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

export class AiSdkLanguageModels implements LanguageModels {
  private readonly fetchImpl: typeof fetch | undefined;
  private readonly guardFetch: typeof fetch | undefined;
  private readonly retryBaseMs: number;
  /**
   * Provider models by what they are made of: building one costs the SDK's response schemas (zod,
   * compiled again on their first use) — about a millisecond, which a tool loop paid every step.
   */
  private readonly models = new Map<string, { apiKey: string | undefined; model: Promise<ProviderModel> }>();

  constructor(options: AiSdkLanguageModelsOptions = {}) {
    this.fetchImpl = options.fetch;
    this.guardFetch = options.guard?.fetch;
    this.retryBaseMs = options.retryBaseMs ?? 1000;
  }

  async *stream(req: ModelRequest): AsyncGenerator<ModelEvent> {
    try {
      yield* this.step(req);
    } catch (err) {
      throw redact(err, req.apiKey);
    }
  }

  private async *step(req: ModelRequest): AsyncGenerator<ModelEvent> {
    const actor = req.actor;
    const timeoutMs = (actor.timeoutSeconds ?? LLM_ACTOR_DEFAULTS.timeoutSeconds) * 1000;
    const maxRetries = actor.maxRetries ?? LLM_ACTOR_DEFAULTS.maxRetries;
    const deadline = Date.now() + timeoutMs;
    const baseUrl = baseUrlOf(actor);
    if (req.signal.aborted) throw cancelled();
    const model = await this.model(actor, req.apiKey, this.fetchFor(req)).catch((err: unknown) => {
      if (err instanceof ProviderFailure) throw err;
      throw new ProviderFailure(
        'protocol',
        `the ${actor.provider} provider library could not be loaded: ${short(String(err))}`,
        'reinstall cleveragents (its dependencies are incomplete)',
      );
    });
    const options = callOptions(req);

    for (let attempt = 0; ; attempt++) {
      if (req.signal.aborted) throw cancelled();
      const state = new AttemptState(timeoutMs, req.signal);
      const sent = { yielded: false };
      try {
        yield* streamAttempt(model, options, state, actor, baseUrl, sent);
        return;
      } catch (err) {
        if (req.signal.aborted) throw cancelled();
        const c = classify(err, state.timedOut, actor, baseUrl, timeoutMs);
        if (sent.yielded || !c.retryable || attempt >= maxRetries) throw c.failure;
        const wait = c.retryAfterMs ?? this.retryBaseMs * 2 ** attempt;
        const left = deadline - Date.now();
        if (wait > MAX_RETRY_WAIT_MS || wait > left) throw tooLong(c, wait);
        await sleep(wait, req.signal);
      } finally {
        state.dispose();
      }
    }
  }

  async check(
    actor: ActorDefinition,
    apiKey: string | undefined,
    signal: AbortSignal,
    access: EndpointAccess = {},
  ): Promise<EndpointCheck> {
    const baseUrl = baseUrlOf(actor);
    const url = `${baseUrl.replace(/\/+$/, '')}/models`;
    const headers: Record<string, string> =
      actor.provider === 'anthropic'
        ? { 'anthropic-version': '2023-06-01', ...(apiKey ? { 'x-api-key': apiKey } : {}) }
        : apiKey
          ? { authorization: `Bearer ${apiKey}` }
          : {};
    const timeout = AbortSignal.timeout(CHECK_TIMEOUT_MS);
    let res: Response;
    try {
      res = await (this.fetchFor(access) ?? fetch)(url, { headers, signal: AbortSignal.any([signal, timeout]) });
    } catch (err) {
      if (signal.aborted) return { ok: false, detail: 'the check was cancelled' };
      const refused = egressRefusal(err);
      if (refused) return { ok: false, detail: `cannot reach ${baseUrl}: ${refused.message}`, hint: refused.hint };
      if (timeout.aborted)
        return {
          ok: false,
          detail: `${baseUrl} did not answer within 5 s`,
          hint: 'is the server running and reachable?',
        };
      return { ok: false, detail: `cannot reach ${baseUrl}: ${networkReason(err)}`, hint: 'is the server running?' };
    }
    const text = await res.text().catch(() => '');
    if (res.status === 401 || res.status === 403)
      return { ok: false, detail: `${baseUrl} refused the API key (${res.status})`, hint: keyHint(actor) };
    if (!res.ok)
      return {
        ok: false,
        detail: `${url} answered ${res.status}${providerMessage(text) ? `: ${providerMessage(text)}` : ''}`,
        hint: 'check baseUrl (it usually ends in /v1)',
      };
    let ids: string[];
    try {
      const data = (JSON.parse(text) as { data?: unknown }).data;
      if (!Array.isArray(data)) throw new Error('no data');
      ids = data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === 'string');
    } catch {
      return { ok: false, detail: `${url} answered, but not with a list of models`, hint: 'check baseUrl' };
    }
    if (ids.includes(actor.model)) return { ok: true, detail: `${baseUrl} answers; model ${actor.model} is listed` };
    return {
      ok: false,
      detail: `${baseUrl} answers; model ${actor.model} is not in its list of ${ids.length} models`,
      hint: `check the model name (agents actor show ${actor.name})${ids.length ? `; listed: ${ids.slice(0, 5).join(', ')}` : ''}`,
    };
  }

  /** The fetch a request goes through: the guard's unless the actor may reach private networks. */
  private fetchFor(access: EndpointAccess): typeof fetch | undefined {
    return this.guardFetch && access.privateNetwork !== true ? this.guardFetch : this.fetchImpl;
  }

  /** The provider model of an actor, made once per endpoint, model, key and fetch. */
  private model(
    actor: ActorDefinition,
    apiKey: string | undefined,
    fetchImpl: typeof fetch | undefined,
  ): Promise<ProviderModel> {
    // The key is compared, never part of the map's key (no string of ours ever holds it).
    const guarded = fetchImpl !== undefined && fetchImpl === this.guardFetch;
    const id = JSON.stringify([actor.provider, baseUrlOf(actor), actor.model, guarded]);
    const hit = this.models.get(id);
    if (hit && hit.apiKey === apiKey) return hit.model;
    const model = this.makeModel(actor, apiKey, fetchImpl);
    this.models.delete(id);
    if (this.models.size >= MAX_CACHED_MODELS) this.models.delete(this.models.keys().next().value as string);
    const entry = { apiKey, model };
    this.models.set(id, entry);
    // A failure (the library could not be loaded) is not kept: the next step tries again.
    model.catch(() => {
      if (this.models.get(id) === entry) this.models.delete(id);
    });
    return model;
  }

  private async makeModel(
    actor: ActorDefinition,
    apiKey: string | undefined,
    fetchImpl: typeof fetch | undefined,
  ): Promise<ProviderModel> {
    const baseURL = baseUrlOf(actor);
    const fetchOpt = fetchImpl ? { fetch: fetchImpl } : {};
    if (actor.provider === 'anthropic') {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      // An empty key sends an empty x-api-key (the SDK would read $ANTHROPIC_API_KEY otherwise).
      return createAnthropic({ baseURL, apiKey: apiKey ?? '', ...fetchOpt }).languageModel(actor.model);
    }
    if (actor.provider === 'openai' || actor.provider === 'openai-compatible') {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      return createOpenAICompatible({
        name: actor.provider,
        baseURL,
        ...(apiKey ? { apiKey } : {}),
        includeUsage: true,
        // OpenAI itself refuses max_tokens for its reasoning models; compatible servers may not know the new name
        ...(actor.provider === 'openai' ? { transformRequestBody: toMaxCompletionTokens } : {}),
        ...fetchOpt,
      }).chatModel(actor.model);
    }
    throw new ProviderFailure(
      'bad-request',
      `actor ${actor.name} has provider ${actor.provider}, which calls no endpoint`,
      'use openai, openai-compatible or anthropic',
    );
  }
}

function toMaxCompletionTokens(body: Record<string, unknown>): Record<string, unknown> {
  const { max_tokens, ...rest } = body;
  return max_tokens === undefined ? body : { ...rest, max_completion_tokens: max_tokens };
}

function baseUrlOf(actor: ActorDefinition): string {
  return actorEndpoint(actor).replace(/\/+$/, '');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(cancelled());
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

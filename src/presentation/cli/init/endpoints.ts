/**
 * What `agents init` finds on this machine (an Ollama, API keys in the environment) and how it
 * checks an endpoint before calling the setup done: the models list, asked the way the agent will
 * ask (the same base URL and key).
 */
import { CliError } from '../exit-codes.ts';
import { messageOf } from '../../../protocol/client/index.ts';

export const INIT_PROVIDERS = ['ollama', 'openai', 'anthropic', 'openai-compatible'] as const;
export type InitProvider = (typeof INIT_PROVIDERS)[number];

/** An endpoint as the actor will use it. */
export interface Endpoint {
  provider: InitProvider;
  /** The base URL the actor names (`…/v1`). */
  baseUrl: string;
  /** The environment variable holding the key; none for a local endpoint such as Ollama. */
  apiKeyEnv?: string | undefined;
}

const DEFAULT_OLLAMA = 'http://127.0.0.1:11434';
/** A probe of a local endpoint: long enough for a loaded machine, short enough not to stall `init`. */
const PROBE_MS = 3000;
/** The endpoint check: a remote API can be slow to answer its models list. */
const CHECK_MS = 15_000;

/** Ollama's address: OLLAMA_HOST (as Ollama reads it: `host`, `host:port` or a URL), else the default. */
export function ollamaBase(env: NodeJS.ProcessEnv): string {
  const host = env['OLLAMA_HOST']?.trim();
  if (!host) return DEFAULT_OLLAMA;
  const withScheme = /^https?:\/\//i.test(host) ? host : `http://${host}`;
  try {
    const u = new URL(withScheme);
    if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
    if (!u.port && !/^https?:\/\/[^/]+:\d+/i.test(withScheme)) u.port = '11434';
    return u.origin;
  } catch {
    return DEFAULT_OLLAMA;
  }
}

async function getJson(
  url: string,
  headers: Record<string, string>,
  ms: number,
  signal: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers, signal: AbortSignal.any([signal, AbortSignal.timeout(ms)]) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text is what the error shows.
  }
  return { status: res.status, body };
}

/** The models a running Ollama has (GET /api/tags); undefined when none answers there. */
export async function ollamaModels(base: string, signal: AbortSignal): Promise<string[] | undefined> {
  try {
    const { status, body } = await getJson(`${base}/api/tags`, {}, PROBE_MS, signal);
    if (status !== 200 || typeof body !== 'object' || body === null) return undefined;
    const models = (body as { models?: Array<{ name?: unknown }> }).models ?? [];
    return models.map((m) => m.name).filter((n): n is string => typeof n === 'string');
  } catch {
    signal.throwIfAborted();
    return undefined;
  }
}

/** What the machine offers, for the choices `init` shows. */
export interface Found {
  ollama: { base: string; models: string[] } | undefined;
  openaiKey: boolean;
  anthropicKey: boolean;
}

export async function discover(env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<Found> {
  const base = ollamaBase(env);
  const models = await ollamaModels(base, signal);
  return {
    ollama: models === undefined ? undefined : { base, models },
    openaiKey: Boolean(env['OPENAI_API_KEY']),
    anthropicKey: Boolean(env['ANTHROPIC_API_KEY']),
  };
}

const errorText = (body: unknown): string => {
  if (typeof body === 'string') return body.slice(0, 300);
  const e = (body as { error?: unknown } | null)?.error;
  if (typeof e === 'string') return e;
  const m = (e as { message?: unknown } | undefined)?.message;
  return typeof m === 'string' ? m : JSON.stringify(body).slice(0, 300);
};

/**
 * Asks the endpoint for its models, as the actor will (same URL, same key); refuses with the exact
 * error and what to do when it does not answer, refuses the key, or has no such model.
 */
export async function checkEndpoint(
  ep: Endpoint,
  model: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<{ models: string[] }> {
  const { url, models } = await endpointModels(ep, env, signal);
  // Some OpenAI-compatible servers list nothing, or not every model they serve: only a list that names others refuses.
  if (models.length > 0 && !models.includes(model))
    throw new CliError(
      `${url} has no model ${JSON.stringify(model)}; it has: ${models.slice(0, 20).join(', ')}${models.length > 20 ? ', …' : ''}`,
      'INVALID_STATE',
      'EndpointCheckFailed',
      'run agents init again with --model and one of those',
    );
  return { models };
}

/**
 * The models the endpoint lists (`GET <base>/models`, with the key the agent will send): what
 * `agents init` offers to choose from, and its check that the endpoint answers. A failure is the
 * error to show, with what to do.
 */
export async function endpointModels(
  ep: Endpoint,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<{ url: string; models: string[] }> {
  const headers: Record<string, string> = {};
  if (ep.apiKeyEnv) {
    const key = env[ep.apiKeyEnv];
    if (!key)
      throw new CliError(
        `${ep.apiKeyEnv} is not set in this environment`,
        'USAGE',
        'EndpointCheckFailed',
        `export ${ep.apiKeyEnv}=… (the agent reads the key from it), then run agents init again`,
      );
    if (ep.provider === 'anthropic') {
      headers['x-api-key'] = key;
      headers['anthropic-version'] = '2023-06-01';
    } else headers['authorization'] = `Bearer ${key}`;
  }
  const url = `${ep.baseUrl.replace(/\/+$/, '')}/models`;
  let answer: { status: number; body: unknown };
  try {
    answer = await getJson(url, headers, CHECK_MS, signal);
  } catch (err) {
    signal.throwIfAborted();
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(
      `cannot reach ${url}: ${cause?.code ?? cause?.message ?? messageOf(err)}`,
      'UNREACHABLE',
      'EndpointCheckFailed',
      ep.provider === 'ollama'
        ? 'start Ollama (ollama serve), or set OLLAMA_HOST to where it runs; then run agents init again'
        : 'check the URL and that the endpoint is running, then run agents init again',
    );
  }
  if (answer.status === 401 || answer.status === 403)
    throw new CliError(
      `${url} refused the key${ep.apiKeyEnv ? ` in ${ep.apiKeyEnv}` : ''} (HTTP ${answer.status}): ${errorText(answer.body)}`,
      'AUTH',
      'EndpointCheckFailed',
      ep.apiKeyEnv
        ? `check the key in ${ep.apiKeyEnv}, then run agents init again`
        : 'the endpoint needs a key: run agents init --api-key-env NAME with the variable that holds it',
    );
  if (answer.status !== 200)
    throw new CliError(
      `${url} answered HTTP ${answer.status}: ${errorText(answer.body)}`,
      'INVALID_STATE',
      'EndpointCheckFailed',
      'check the URL: it is the base of an OpenAI-compatible API (it ends in /v1 for most servers)',
    );
  const data = (answer.body as { data?: Array<{ id?: unknown }> } | null)?.data;
  const models = Array.isArray(data) ? data.map((m) => m.id).filter((id): id is string => typeof id === 'string') : [];
  return { url, models };
}

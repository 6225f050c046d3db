/** Which model `agents init` sets up: from the flags, or from what it found and the user's answers. */
import { UsageError } from '../exit-codes.ts';
import { qualify } from '../render/definition.render.ts';
import { INIT_PROVIDERS, type Endpoint, type Found, type InitProvider } from './endpoints.ts';
import type { Prompter } from './prompt.ts';

export interface InitFlags {
  provider?: string;
  model?: string;
  url?: string;
  apiKeyEnv?: string;
  name?: string;
  yes?: boolean;
  project?: boolean;
}

/** The choice made: the endpoint, its model and the actor's name. */
export interface Choice {
  endpoint: Endpoint;
  model: string;
  name: string;
}

/**
 * The providers' own endpoints, written into the actor so that `actor show` says where requests go
 * (the agent's defaults for these providers are the same URLs; the CLI may not import the domain).
 */
const PROVIDER_URLS = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com/v1' } as const;

/** Models used when none is named: each provider's small, cheap, current one. */
const DEFAULT_MODELS: Partial<Record<InitProvider, string>> = {
  openai: 'gpt-4.1-mini',
  anthropic: 'claude-sonnet-4-5',
};

/** The actor each provider gets unless --name says otherwise (so that re-running updates it). */
const DEFAULT_NAMES: Record<InitProvider, string> = {
  ollama: 'local/ollama',
  openai: 'local/openai',
  anthropic: 'local/anthropic',
  'openai-compatible': 'local/llm',
};

const isProvider = (p: string): p is InitProvider => (INIT_PROVIDERS as readonly string[]).includes(p);

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

function checkedUrl(url: string): string {
  if (!/^https?:\/\/[^/]/i.test(url))
    throw new UsageError(
      `--url must be an http:// or https:// URL, not ${JSON.stringify(url)}`,
      'e.g. --url http://127.0.0.1:8000/v1',
    );
  return url.replace(/\/+$/, '');
}

/** The endpoint of a provider, from flags and what was found; throws a usage error when something is missing. */
function endpointOf(provider: InitProvider, flags: InitFlags, found: Found): Endpoint {
  if (flags.apiKeyEnv !== undefined && !ENV_NAME.test(flags.apiKeyEnv))
    throw new UsageError(`--api-key-env must be an environment variable name, not ${JSON.stringify(flags.apiKeyEnv)}`);
  switch (provider) {
    case 'ollama': {
      const base = flags.url ? checkedUrl(flags.url).replace(/\/v1$/, '') : found.ollama?.base;
      if (!base)
        throw new UsageError(
          'no Ollama answers at the default address',
          'start it (ollama serve), set OLLAMA_HOST, or give --url http://host:11434',
        );
      return { provider, baseUrl: `${base}/v1`, ...(flags.apiKeyEnv ? { apiKeyEnv: flags.apiKeyEnv } : {}) };
    }
    case 'openai':
    case 'anthropic': {
      const baseUrl = flags.url ? checkedUrl(flags.url) : PROVIDER_URLS[provider];
      const apiKeyEnv = flags.apiKeyEnv ?? (provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY');
      return { provider, baseUrl, apiKeyEnv };
    }
    case 'openai-compatible': {
      if (!flags.url)
        throw new UsageError('--provider openai-compatible needs --url', 'e.g. --url http://127.0.0.1:8000/v1');
      return { provider, baseUrl: checkedUrl(flags.url), ...(flags.apiKeyEnv ? { apiKeyEnv: flags.apiKeyEnv } : {}) };
    }
  }
}

/** The first thing found, for a run without a terminal or with --yes and no --provider. */
function firstFound(found: Found): InitProvider {
  if (found.ollama && found.ollama.models.length > 0) return 'ollama';
  if (found.openaiKey) return 'openai';
  if (found.anthropicKey) return 'anthropic';
  throw new UsageError(
    'found no model to set up: no Ollama with a model, no OPENAI_API_KEY, no ANTHROPIC_API_KEY',
    'give one: agents init --provider openai-compatible --url http://host:port/v1 --model NAME (or start Ollama and pull a model)',
  );
}

/** Without questions: the flags, filled in from what was found. */
export function chooseFromFlags(flags: InitFlags, found: Found): Choice {
  if (flags.provider !== undefined && !isProvider(flags.provider))
    throw new UsageError(
      `--provider must be one of ${INIT_PROVIDERS.join(', ')}, not ${JSON.stringify(flags.provider)}`,
    );
  const provider = flags.provider ?? firstFound(found);
  const endpoint = endpointOf(provider, flags, found);
  const model = flags.model ?? (provider === 'ollama' ? found.ollama?.models[0] : DEFAULT_MODELS[provider]);
  if (!model)
    throw new UsageError(
      provider === 'ollama' ? 'the Ollama there has no model' : `--provider ${provider} needs --model`,
      provider === 'ollama' ? 'pull one (ollama pull llama3.2), or give --model' : 'give --model NAME',
    );
  return { endpoint, model, name: flags.name ? qualify(flags.name) : DEFAULT_NAMES[provider] };
}

/** The models an endpoint lists, to choose from ([] when it lists none or cannot be asked now). */
export type ModelLister = (endpoint: Endpoint) => Promise<string[]>;

/**
 * On a terminal: numbered choices of what was found, then the model (numbered too when the
 * endpoint lists its models). Flags given are not asked again.
 */
export async function chooseInteractively(
  flags: InitFlags,
  found: Found,
  ask: Prompter,
  listModels: ModelLister = () => Promise.resolve([]),
): Promise<Choice> {
  const models = { found, ask, listModels };
  if (flags.provider !== undefined) return fillModel(chooseFromFlagsLenient(flags, found), flags, models);
  const options: Array<{ provider: InitProvider; label: string }> = [];
  if (found.ollama)
    options.push({
      provider: 'ollama',
      label: `Ollama at ${found.ollama.base} (${found.ollama.models.length} model${found.ollama.models.length === 1 ? '' : 's'})`,
    });
  if (found.openaiKey) options.push({ provider: 'openai', label: 'OpenAI (OPENAI_API_KEY is set)' });
  if (found.anthropicKey) options.push({ provider: 'anthropic', label: 'Anthropic (ANTHROPIC_API_KEY is set)' });
  options.push({ provider: 'openai-compatible', label: 'An OpenAI-compatible endpoint (type its URL)' });
  const picked =
    options[
      await ask.choose(
        'Which model should the agent use?',
        options.map((o) => o.label),
      )
    ];
  const provider = picked?.provider ?? 'openai-compatible';
  const withUrl: InitFlags = { ...flags };
  if (provider === 'openai-compatible') {
    withUrl.url = flags.url ?? (await ask.ask('Base URL (e.g. http://127.0.0.1:8000/v1)'));
    const keyEnv = flags.apiKeyEnv ?? (await ask.ask('Environment variable with its API key (Enter: none)', ''));
    if (keyEnv) withUrl.apiKeyEnv = keyEnv;
  }
  return fillModel(chooseFromFlagsLenient({ ...withUrl, provider }, found), flags, models);
}

/** The flags' choice with the model left to ask when it is not given. */
function chooseFromFlagsLenient(flags: InitFlags, found: Found): Omit<Choice, 'model'> & { provider: InitProvider } {
  if (flags.provider !== undefined && !isProvider(flags.provider))
    throw new UsageError(
      `--provider must be one of ${INIT_PROVIDERS.join(', ')}, not ${JSON.stringify(flags.provider)}`,
    );
  const provider = flags.provider ?? 'openai-compatible';
  return {
    provider,
    endpoint: endpointOf(provider, flags, found),
    name: flags.name ? qualify(flags.name) : DEFAULT_NAMES[provider],
  };
}

async function fillModel(
  partial: Omit<Choice, 'model'> & { provider: InitProvider },
  flags: InitFlags,
  { found, ask, listModels }: { found: Found; ask: Prompter; listModels: ModelLister },
): Promise<Choice> {
  const { endpoint, name } = partial;
  if (flags.model) return { endpoint, name, model: flags.model };
  const models = partial.provider === 'ollama' ? (found.ollama?.models ?? []) : await listModels(endpoint);
  const fallback = DEFAULT_MODELS[partial.provider];
  if (models.length > 0) {
    // The provider's usual model first, when the endpoint has it (Enter picks the first).
    const ordered =
      fallback && models.includes(fallback) ? [fallback, ...models.filter((m) => m !== fallback)] : models;
    const i = await ask.choose('Which model?', ordered);
    return { endpoint, name, model: ordered[i] ?? ordered[0] ?? '' };
  }
  return { endpoint, name, model: await ask.ask('Model', fallback) };
}

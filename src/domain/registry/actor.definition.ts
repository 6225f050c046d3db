import { z } from 'zod';
import { EntityName } from './names.ts';
import { AbsolutePath, Description, Ref } from './definition-fields.ts';

/** The providers an actor may name: LLM endpoints, or the built-in deterministic actors. */
export const ACTOR_PROVIDERS = ['openai-compatible', 'openai', 'anthropic', 'builtin'] as const;
export type ActorProvider = (typeof ACTOR_PROVIDERS)[number];

/** What an LLM actor uses when its definition leaves a field out. */
export const LLM_ACTOR_DEFAULTS = {
  /** Tokens the model sees at most (prompt and answer); a model's real window is usually larger. */
  contextWindow: 8192,
  /** Tokens an answer may have when the actor sets no maxTokens. */
  maxTokens: 2048,
  timeoutSeconds: 120,
  maxRetries: 2,
  maxToolSteps: 20,
} as const;

/**
 * The price of prompt-cache tokens as a multiple of an actor's input price, when its `prices` name
 * none: what each provider bills. An openai-compatible endpoint may be anyone's, so its cached
 * tokens cost what input costs (a cost budget then never counts less than was spent).
 */
export const CACHE_PRICE_FACTORS: Readonly<Record<ActorProvider, { read: number; write: number }>> = {
  anthropic: { read: 0.1, write: 1.25 },
  openai: { read: 0.5, write: 1 },
  'openai-compatible': { read: 1, write: 1 },
  builtin: { read: 1, write: 1 },
};

/** What an actor's `compaction` uses when it leaves a field out. */
export const COMPACTION_DEFAULTS = { threshold: 0.75, keepTurns: 2, enabled: true } as const;

/** The endpoint a provider uses when the actor names no baseUrl. */
export const DEFAULT_BASE_URLS: Readonly<Partial<Record<ActorProvider, string>>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
};

/** Where an LLM actor's requests go: its baseUrl, or its provider's default ('' for builtin). */
export const actorEndpoint = (a: Pick<ActorDefinition, 'provider' | 'baseUrl'>): string =>
  a.baseUrl ?? DEFAULT_BASE_URLS[a.provider] ?? '';

/** Whether the actor names a key (a local endpoint such as Ollama may need none). */
export const namesApiKey = (a: Pick<ActorDefinition, 'apiKeyEnv' | 'apiKeyFile' | 'apiKeySecret'>): boolean =>
  a.apiKeyEnv !== undefined || a.apiKeyFile !== undefined || a.apiKeySecret !== undefined;

/** The name of a secret in a namespace's secret store (`agents secret set NAME`). */
export const SecretName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,127}$/, 'must be a secret name: a letter, then letters, digits, - and _');

/** Fallback actors an actor may list. */
export const MAX_FALLBACKS = 5;

/** How many of a session's newest turns a compaction keeps verbatim (an actor's setting, or `session compact --keep`). */
export const KeepTurns = z
  .number()
  .int('must be an integer')
  .min(0, 'must be between 0 and 50')
  .max(50, 'must be between 0 and 50');

export const ActorDefinition = z
  .object({
    name: EntityName,
    description: Description.optional(),
    provider: z.enum(ACTOR_PROVIDERS, { message: `must be one of ${ACTOR_PROVIDERS.join(', ')}` }),
    model: z.string().min(1, 'is required').max(200),
    baseUrl: z
      .string()
      .url('must be an absolute URL')
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
      .optional(),
    /** The environment variable holding the API key (of the server process). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name')
      .optional(),
    /** A file holding the API key; it must be readable by its owner only (mode 0600 or 0400). */
    apiKeyFile: AbsolutePath.optional(),
    /** A secret of the actor's own namespace holding the API key (`agents secret set NAME`). */
    apiKeySecret: SecretName.optional(),
    systemPrompt: z.string().max(100_000).optional(),
    temperature: z.number().min(0, 'must be between 0 and 2').max(2, 'must be between 0 and 2').optional(),
    maxTokens: z.number().int('must be an integer').positive('must be positive').optional(),
    /** The model's context window in tokens: the history sent is trimmed to fit it. */
    contextWindow: z
      .number()
      .int('must be an integer')
      .min(256, 'must be at least 256')
      .max(10_000_000, 'is at most 10000000')
      .optional(),
    timeoutSeconds: z.number().positive('must be positive').max(3600, 'is at most 3600').optional(),
    maxRetries: z
      .number()
      .int('must be an integer')
      .min(0, 'must be between 0 and 10')
      .max(10, 'must be between 0 and 10')
      .optional(),
    maxToolSteps: z
      .number()
      .int('must be an integer')
      .min(1, 'must be between 1 and 1000')
      .max(1000, 'must be between 1 and 1000')
      .optional(),
    /**
     * Prices per million tokens (in `currency`, default USD), for the cost of each turn and the
     * plans' `--max-cost`. Input tokens read from or written to the provider's prompt cache are
     * charged at `cacheReadPerMillion` / `cacheWritePerMillion`; absent, as the provider bills them
     * (CACHE_PRICE_FACTORS): Anthropic reads 0.1× and writes 1.25× the input price, OpenAI's cached
     * input 0.5×; an openai-compatible endpoint's cached input at the input price.
     */
    prices: z
      .object({
        inputPerMillion: z.number().nonnegative('must not be negative'),
        outputPerMillion: z.number().nonnegative('must not be negative'),
        cacheReadPerMillion: z
          .number()
          .nonnegative('must not be negative')
          .describe(
            'the price of a million input tokens read from the prompt cache (default: anthropic 0.1×, openai 0.5×, openai-compatible 1× inputPerMillion)',
          )
          .optional(),
        cacheWritePerMillion: z
          .number()
          .nonnegative('must not be negative')
          .describe(
            'the price of a million input tokens written to the prompt cache (default: anthropic 1.25× inputPerMillion; others report no writes)',
          )
          .optional(),
        currency: z
          .string()
          .regex(/^[A-Z]{3}$/, 'must be a currency code such as USD')
          .optional(),
      })
      .strict()
      .optional(),
    skills: z.array(Ref).optional(),
    tools: z.array(Ref).optional(),
    unsafe: z.boolean().optional(),
    /** When a session's earlier turns are summarised so it stays within the window (see COMPACTION_DEFAULTS). */
    compaction: z
      .object({
        /** The fraction of contextWindow the earlier turns may fill before they are compacted. */
        threshold: z
          .number()
          .min(0.1, 'must be between 0.1 and 0.95')
          .max(0.95, 'must be between 0.1 and 0.95')
          .optional(),
        /** The newest turns kept verbatim. */
        keepTurns: KeepTurns.optional(),
        /** The LLM actor that writes the summary (default: this actor). */
        summarizer: Ref.optional(),
        enabled: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /** Actors whose models answer, in order, when this one's fails (rate limit, 5xx, timeout, network, 404 model). */
    fallbacks: z
      .array(Ref)
      .max(MAX_FALLBACKS, `lists at most ${MAX_FALLBACKS} actors`)
      .refine((f) => new Set(f).size === f.length, 'names an actor twice')
      .optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.provider === 'openai-compatible' && a.baseUrl === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'an openai-compatible actor needs baseUrl (e.g. http://127.0.0.1:11434/v1 for Ollama)',
      });
    const keys = (['apiKeyEnv', 'apiKeyFile', 'apiKeySecret'] as const).filter((f) => a[f] !== undefined);
    if (keys.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: [keys[1] ?? 'apiKeyFile'],
        message: 'give one of apiKeyEnv, apiKeyFile and apiKeySecret, not several',
      });
    if (a.provider === 'builtin')
      for (const f of ['baseUrl', 'apiKeyEnv', 'apiKeyFile', 'apiKeySecret', 'prices', 'fallbacks'] as const)
        if (a[f] !== undefined)
          ctx.addIssue({ code: 'custom', path: [f], message: 'a builtin actor calls no endpoint: leave it out' });
  });
export type ActorDefinition = z.infer<typeof ActorDefinition>;

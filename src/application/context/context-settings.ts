/**
 * A project's context settings per view: the effective values with where each came from, and the
 * change `set` makes (a field given as null is cleared, so the view inherits it again).
 */
import {
  CONTEXT_DEFAULTS,
  CONTEXT_VIEWS,
  ContextViewSettings,
  ProjectContextSettings,
  VIEW_PARENT,
  type ContextView,
  type EffectiveContextSettings,
} from '../../domain/context/context.ts';
import { AppError, type FieldViolation } from '../../domain/errors.ts';
import { CHAT_CONTEXT_MODES, type ChatContextMode } from '../../domain/session.ts';
import type { ContextSetInput, SettingSource, ViewSettingsShown } from './context.types.ts';

const FIELDS = Object.keys(CONTEXT_DEFAULTS) as Array<keyof EffectiveContextSettings>;

/** The fields a view sets itself (the top level for `default`, `views.<view>` for the others). */
export function ownSettings(ctx: ProjectContextSettings | undefined, view: ContextView): ContextViewSettings {
  if (!ctx) return {};
  if (view === 'default') {
    const { views: _views, ...own } = ctx;
    return own;
  }
  return ctx.views?.[view] ?? {};
}

/** The view's effective settings: each field from the nearest view that sets it, else the built-in default. */
export function effectiveSettings(ctx: ProjectContextSettings | undefined, view: ContextView): ViewSettingsShown {
  const chain: ContextView[] = [];
  for (let v: ContextView | undefined = view; v !== undefined; v = VIEW_PARENT[v]) chain.push(v);
  const own = chain.map((v) => ({ v, s: ownSettings(ctx, v) }));
  const settings = structuredClone(CONTEXT_DEFAULTS);
  const sources = Object.fromEntries(FIELDS.map((f) => [f, 'builtin'])) as Record<
    keyof EffectiveContextSettings,
    SettingSource
  >;
  const pick = <K extends keyof ContextViewSettings & keyof EffectiveContextSettings>(field: K): void => {
    const from = own.find((o) => o.s[field] !== undefined);
    if (!from) return;
    (settings as Record<K, unknown>)[field] = structuredClone(from.s[field]);
    sources[field] = `view:${from.v}`;
  };
  for (const f of ['include', 'exclude', 'maxFileSize', 'maxTotalSize', 'maxFiles', 'tokenBudget', 'ranking'] as const)
    pick(f);
  // Reserves merge field by field (a view may change the history reserve only); the source is the
  // nearest view that sets any of them.
  for (const o of [...own].reverse()) if (o.s.reserves) Object.assign(settings.reserves, o.s.reserves);
  const nearest = own.find((o) => o.s.reserves !== undefined);
  if (nearest) sources.reserves = `view:${nearest.v}`;
  // So do the instruction settings (a view may raise maxTokens only).
  for (const o of [...own].reverse())
    if (o.s.instructions) Object.assign(settings.instructions, structuredClone(o.s.instructions));
  const nearestInstructions = own.find((o) => o.s.instructions !== undefined);
  if (nearestInstructions) sources.instructions = `view:${nearestInstructions.v}`;
  return { view, settings, sources };
}

/**
 * `settings.context` after `set`: the given fields written on the view, null ones removed; empty
 * objects are dropped. Refuses (INVALID_PARAMS, each problem located as `settings.<field>`) a value
 * the schema does not accept; the stored settings are not touched.
 */
export function applySet(
  ctx: ProjectContextSettings | undefined,
  input: Pick<ContextSetInput, 'view' | 'settings'>,
): ProjectContextSettings | undefined {
  const patch = input.settings as Record<string, unknown>;
  const own: Record<string, unknown> = { ...ownSettings(ctx, input.view) };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete own[field];
    else if (field === 'instructions' && isObject(value) && isObject(own[field]))
      // Its fields are set one by one: setting maxTokens keeps the view's files.
      own[field] = { ...own[field], ...value };
    else if (value !== undefined) own[field] = value;
  }
  const checked = ContextViewSettings.safeParse(own);
  if (!checked.success) {
    const fields: FieldViolation[] = checked.error.issues.map((i) => {
      const at = i.code === 'unrecognized_keys' ? [...i.path, ...i.keys] : i.path;
      return {
        field: ['settings', ...at].join('.'),
        description: i.code === 'unrecognized_keys' ? 'is not a context setting' : i.message,
      };
    });
    throw new AppError(
      'INVALID_PARAMS',
      `The ${input.view} view's context settings are not valid; nothing was written`,
      {
        fields,
        details: { view: input.view },
        hint: 'see the settings and their current values with `agents project context show <project>`',
      },
    );
  }
  const next: ProjectContextSettings = { ...(ctx ?? {}) };
  if (input.view === 'default') {
    for (const f of Object.keys(next)) if (f !== 'views') delete (next as Record<string, unknown>)[f];
    Object.assign(next, checked.data);
  } else {
    const views = { ...(next.views ?? {}) };
    if (Object.keys(checked.data).length > 0) views[input.view] = checked.data;
    else delete views[input.view];
    if (Object.keys(views).length > 0) next.views = views;
    else delete next.views;
  }
  return Object.keys(next).length > 0 ? ProjectContextSettings.parse(next) : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A chat context mode, or INVALID_PARAMS naming the modes. */
export function checkMode(mode: string): ChatContextMode {
  if ((CHAT_CONTEXT_MODES as readonly string[]).includes(mode)) return mode as ChatContextMode;
  throw new AppError('INVALID_PARAMS', `There is no chat context mode ${JSON.stringify(mode)}`, {
    fields: [{ field: 'mode', description: `must be one of ${CHAT_CONTEXT_MODES.join(', ')}` }],
  });
}

/** A context view, or INVALID_PARAMS naming the views. */
export function checkView(view: string): ContextView {
  if ((CONTEXT_VIEWS as readonly string[]).includes(view)) return view as ContextView;
  throw new AppError('INVALID_PARAMS', `There is no context view ${JSON.stringify(view)}`, {
    fields: [{ field: 'view', description: `must be one of ${CONTEXT_VIEWS.join(', ')}` }],
  });
}

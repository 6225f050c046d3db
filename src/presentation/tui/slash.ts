/** The TUI's slash commands: what each takes, and the parse of a typed line into one. */
import { parseCompactArgs, parseDiffArgs } from '../cli/render/chat-commands.render.ts';
import { parseUndoArgs } from '../cli/render/undo.render.ts';

export type SlashCommand =
  | { name: 'new'; actor?: string; project?: string; skills: string[]; title?: string }
  | { name: 'sessions' }
  | { name: 'session'; id: string }
  | { name: 'delete'; id?: string }
  | { name: 'undo'; turn?: number; force: boolean }
  | { name: 'model'; actor?: string }
  | { name: 'compact'; keepTurns?: number }
  | { name: 'cost' }
  | { name: 'clear' }
  | { name: 'tools' }
  | { name: 'context' }
  | { name: 'plans' }
  | { name: 'plan'; id: string }
  | {
      name: 'plan-use';
      action?: string;
      goal?: string;
      projects: string[];
      args: Record<string, string>;
      profile?: string;
      actor?: string;
      strategyActor?: string;
      executionActor?: string;
    }
  | { name: 'execute' }
  | { name: 'apply' }
  | { name: 'approve' }
  | { name: 'reject'; guidance?: string }
  | { name: 'rollback'; checkpoint?: string }
  | { name: 'correct'; text: string; mode: 'revert' | 'append' }
  | { name: 'cancel' }
  /** In the chat: the session's changes (`turn`: one turn's); in a plan: its diff shown or hidden. */
  | { name: 'diff'; turn?: number }
  | { name: 'refresh' }
  | { name: 'help' }
  | { name: 'quit' };

export type SlashParse = { ok: true; cmd: SlashCommand } | { ok: false; message: string; hint?: string };

/** Each command with its usage line, for /help, the overlay and the errors. */
export const SLASH_USAGE: ReadonlyArray<readonly [string, string]> = [
  ['/new [--actor A] [--project P] [--skill S]… [--title T]', 'a new chat session'],
  ['/sessions', 'the sessions list'],
  ['/session <id>', 'open a session (its last turns first)'],
  ['/delete [id]', 'delete a session (the selected one in the list), after y'],
  ['/undo [turn] [--force]', "put the open chat's files back as before its last turn (or before that turn)"],
  ['/model [actor]', "the chat's actor and the ones you can switch to, or switch the next turns to one"],
  ['/compact [keep]', "summarise the chat's older turns now, keeping the newest [keep] as they are"],
  ['/cost', 'tokens and cost of the chat so far'],
  ['/clear', 'a new session with the same actor, project, skills and context'],
  ['/tools', "the tools the chat's actor can use in the next turn"],
  ['/context', 'what the next turn would send: prompt, history, project files, tools, against the window'],
  ['/plans', 'the plans list'],
  ['/plan <id>', 'open a plan'],
  ['/plan use <action> <project>… [--arg k=v]… [--profile P]', 'make a plan and strategize it'],
  [
    '/plan use --goal "…" <project>… [--actor A] [--strategy-actor A] [--execution-actor A]',
    'a plan from a goal (LLM actors)',
  ],
  ['/execute', "run the open plan's execute phase (or resume it)"],
  ['/apply', "merge the open plan's changes into the project"],
  ['/approve · /reject [guidance]', 'answer what the plan or the chat waits for'],
  ['/rollback [checkpoint]', 'restore the sandbox to a checkpoint (default: one step back)'],
  ['/correct [--append] <text>', 'correct the selected decision (revert and re-plan, or append guidance)'],
  ['/cancel', 'cancel the open plan'],
  ['/diff [turn]', "in the chat: what its turns changed (turn N's); in a plan: show or hide its diff"],
  ['/refresh', 'read the current view again'],
  ['/help', 'keys and commands of this view'],
  ['/quit · /exit', 'leave (also Ctrl-D on an empty line, q in a list)'],
];

const usageOf = (cmd: string): string =>
  SLASH_USAGE.filter(([u]) => u === cmd || u.startsWith(`${cmd} `))
    .map(([u]) => u)
    .join('  or  ') || cmd;

/** Splits a line into words; "double" or 'single' quotes keep spaces. */
export function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

const fail = (message: string, cmd?: string): SlashParse =>
  cmd ? { ok: false, message, hint: `usage: ${usageOf(cmd)}` } : { ok: false, message };

/** Flags of a command: `--name value` pairs (repeatable ones collected), the rest positional. */
function flags(
  args: string[],
  known: Record<string, 'one' | 'many' | 'bool'>,
): { values: Record<string, string[]>; rest: string[] } | string {
  const values: Record<string, string[]> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (!a.startsWith('--')) {
      rest.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const kind = known[name];
    if (!kind) return `unknown option --${name}`;
    if (kind === 'bool') {
      values[name] = ['true'];
      continue;
    }
    const v = inline ?? args[++i];
    if (v === undefined || v === '') return `--${name} needs a value`;
    if (kind === 'one' && values[name]) return `--${name} is given twice`;
    (values[name] ??= []).push(v);
  }
  return { values, rest };
}

/** The command a line starting with `/` asks for, or why it cannot be run. */
export function parseSlash(line: string): SlashParse {
  const [head = '', ...args] = words(line.trim());
  const name = head.replace(/^\//, '').toLowerCase();
  const none = (cmd: SlashCommand): SlashParse =>
    args.length ? fail(`/${name} takes no arguments`, `/${name}`) : { ok: true, cmd };
  switch (name) {
    case 'new': {
      const f = flags(args, { actor: 'one', project: 'one', skill: 'many', title: 'one' });
      if (typeof f === 'string') return fail(f, '/new');
      if (f.rest.length) return fail(`unexpected ${f.rest.join(' ')}`, '/new');
      const v = f.values;
      return {
        ok: true,
        cmd: {
          name: 'new',
          skills: v['skill'] ?? [],
          ...(v['actor'] ? { actor: v['actor'][0] } : {}),
          ...(v['project'] ? { project: v['project'][0] } : {}),
          ...(v['title'] ? { title: v['title'][0] } : {}),
        } as SlashCommand,
      };
    }
    case 'sessions':
      return none({ name: 'sessions' });
    case 'session':
      return args.length === 1 && args[0]
        ? { ok: true, cmd: { name: 'session', id: args[0] } }
        : fail('/session needs one session id', '/session');
    case 'delete':
      return args.length > 1
        ? fail('/delete takes at most one session id', '/delete')
        : { ok: true, cmd: args[0] ? { name: 'delete', id: args[0] } : { name: 'delete' } };
    case 'undo': {
      const u = parseUndoArgs(args);
      return typeof u === 'string' ? fail(u, '/undo') : { ok: true, cmd: { name: 'undo', ...u } };
    }
    case 'model':
      return args.length > 1
        ? fail('/model takes one actor name', '/model')
        : { ok: true, cmd: args[0] ? { name: 'model', actor: args[0] } : { name: 'model' } };
    case 'compact': {
      const c = parseCompactArgs(args);
      return typeof c === 'string' ? fail(c, '/compact') : { ok: true, cmd: { name: 'compact', ...c } };
    }
    case 'diff': {
      const d = parseDiffArgs(args);
      return typeof d === 'string' ? fail(d, '/diff') : { ok: true, cmd: { name: 'diff', ...d } };
    }
    case 'plans':
      return none({ name: 'plans' });
    case 'plan':
      if (args[0] === 'use') return planUse(args.slice(1));
      return args.length === 1 && args[0]
        ? { ok: true, cmd: { name: 'plan', id: args[0] } }
        : fail('/plan needs a plan id, or use <action> <project>…', '/plan');
    case 'execute':
    case 'apply':
    case 'approve':
    case 'cancel':
    case 'cost':
    case 'clear':
    case 'tools':
    case 'context':
    case 'refresh':
    case 'help':
      return none({ name });
    case 'quit':
    case 'exit':
      return none({ name: 'quit' });
    case 'reject': {
      const guidance = args.join(' ').trim();
      return { ok: true, cmd: guidance ? { name: 'reject', guidance } : { name: 'reject' } };
    }
    case 'rollback':
      return args.length > 1
        ? fail('/rollback takes at most one checkpoint id', '/rollback')
        : { ok: true, cmd: args[0] ? { name: 'rollback', checkpoint: args[0] } : { name: 'rollback' } };
    case 'correct': {
      const append = args[0] === '--append';
      const text = (append ? args.slice(1) : args).join(' ').trim();
      if (!text) return fail('/correct needs the guidance: what to do differently', '/correct');
      return { ok: true, cmd: { name: 'correct', text, mode: append ? 'append' : 'revert' } };
    }
    default:
      return { ok: false, message: `unknown command /${name}`, hint: 'type /help for the commands' };
  }
}

function planUse(args: string[]): SlashParse {
  // The same options as `agents plan use`, so a hint naming one of them is true here too.
  const f = flags(args, {
    project: 'many',
    arg: 'many',
    goal: 'one',
    profile: 'one',
    actor: 'one',
    'strategy-actor': 'one',
    'execution-actor': 'one',
  });
  if (typeof f === 'string') return fail(f, '/plan use');
  const goal = f.values['goal']?.[0];
  const [first, ...others] = f.rest;
  const action = goal === undefined ? first : undefined;
  const projects = [...(goal === undefined ? others : f.rest), ...(f.values['project'] ?? [])];
  if (goal === undefined && !action) return fail('/plan use needs an action', '/plan use');
  if (projects.length === 0) return fail('/plan use needs at least one project', '/plan use');
  const pairs: Record<string, string> = {};
  for (const kv of f.values['arg'] ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) return fail(`--arg ${kv}: must be name=value`, '/plan use');
    pairs[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const profile = f.values['profile']?.[0];
  const actor = f.values['actor']?.[0];
  const strategyActor = f.values['strategy-actor']?.[0];
  const executionActor = f.values['execution-actor']?.[0];
  return {
    ok: true,
    cmd: {
      name: 'plan-use',
      projects,
      args: pairs,
      ...(action ? { action } : {}),
      ...(goal !== undefined ? { goal } : {}),
      ...(profile ? { profile } : {}),
      ...(actor ? { actor } : {}),
      ...(strategyActor ? { strategyActor } : {}),
      ...(executionActor ? { executionActor } : {}),
    },
  };
}

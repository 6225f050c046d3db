import type { ChatController } from './chat-controller.ts';
import type { Guard } from './guard.ts';
import type { PlanController } from './plan-controller.ts';
import type { SessionCommands } from './session-commands.ts';
import { parseSlash, type SlashCommand } from './slash.ts';
import { VIEWS, type View } from './state.ts';
import type { Store } from './store.ts';

/** What the keys and the slash commands act through. */
export interface Tui {
  store: Store;
  chat: ChatController;
  /** The chat view's commands on its session (`/model`, `/cost`, …). */
  session: SessionCommands;
  plans: PlanController;
  guard: Guard;
}

/** Shows a view, reading its list again when it is one. */
export async function go(tui: Tui, view: View): Promise<void> {
  const s = tui.store.get();
  if (view === 'chat' && !s.session) return tui.guard.info('no session open: n or /new starts one, Enter opens one');
  if (view === 'plan' && !s.plan.status) return tui.guard.info('no plan open: Enter on a plan, or /plan <id>');
  tui.store.dispatch({ type: 'view', view });
  if (view === 'sessions') await tui.chat.loadSessions();
  if (view === 'plans') await tui.plans.loadPlans();
  if (view === 'plan') await tui.plans.refresh();
}

/** Tab: the next view that has something to show. */
export function nextView(tui: Tui): Promise<void> {
  const s = tui.store.get();
  const i = VIEWS.indexOf(s.view);
  for (let k = 1; k <= VIEWS.length; k++) {
    const v = VIEWS[(i + k) % VIEWS.length] as View;
    if ((v === 'chat' && !s.session) || (v === 'plan' && !s.plan.status)) continue;
    return go(tui, v);
  }
  return Promise.resolve();
}

/** A line typed with a leading `/`. */
export async function runLine(tui: Tui, line: string): Promise<void> {
  const parsed = parseSlash(line);
  if (!parsed.ok) {
    tui.store.dispatch({
      type: 'notice',
      notice: {
        level: 'error',
        report: { message: parsed.message, type: 'UsageError', ...(parsed.hint ? { hint: parsed.hint } : {}) },
      },
    });
    return;
  }
  await runSlash(tui, parsed.cmd);
}

/** Needs a plan open, for the plan commands typed elsewhere. */
const onPlan = (tui: Tui, fn: () => Promise<void>): Promise<void> =>
  tui.store.get().plan.status ? fn() : Promise.resolve(tui.guard.info('open a plan first: /plans, or /plan <id>'));

/** Needs the chat view with a session open, for the commands on that session. */
const inChat = (tui: Tui, what: string, fn: (sessionId: string) => Promise<void>): Promise<void> => {
  const s = tui.store.get();
  if (s.view !== 'chat' || !s.session)
    return Promise.resolve(tui.guard.info(`open a chat first: ${what} works on its session`));
  return fn(s.session.id);
};

export async function runSlash(tui: Tui, cmd: SlashCommand): Promise<void> {
  const { chat, plans, store } = tui;
  switch (cmd.name) {
    case 'new':
      return chat.newSession(cmd);
    case 'sessions':
      return go(tui, 'sessions');
    case 'session':
      return chat.openSession(cmd.id);
    case 'delete': {
      const s = store.get();
      const target = cmd.id ? { id: cmd.id } : s.view === 'chat' ? s.session : s.sessions[s.sessionIndex];
      if (!target) return tui.guard.info('no session to delete');
      store.dispatch({ type: 'confirm-delete', session: target });
      return tui.guard.info(`delete session ${target.id}? y deletes it, n keeps it`);
    }
    case 'undo':
      return inChat(tui, '/undo', (id) => tui.session.undo(id, cmd));
    case 'model':
      return inChat(tui, '/model', (id) => tui.session.model(id, cmd.actor));
    case 'compact':
      return inChat(tui, '/compact', (id) => tui.session.compact(id, cmd.keepTurns));
    case 'cost':
      return inChat(tui, '/cost', (id) => tui.session.cost(id));
    case 'tools':
    case 'context':
      return inChat(tui, `/${cmd.name}`, (id) => tui.session.preview(id, cmd.name));
    case 'clear':
      return inChat(tui, '/clear', () => chat.clear());
    case 'plans':
      return go(tui, 'plans');
    case 'plan':
      return plans.open(cmd.id);
    case 'plan-use':
      return plans.use(cmd);
    case 'execute':
      return onPlan(tui, plans.execute);
    case 'apply':
      return onPlan(tui, plans.apply);
    case 'cancel':
      return onPlan(tui, plans.cancel);
    case 'diff':
      // The chat's /diff is its session's changes; elsewhere the open plan's diff, shown or hidden.
      if (store.get().view === 'chat') return inChat(tui, '/diff', (id) => tui.session.diff(id, cmd.turn));
      if (cmd.turn !== undefined)
        return tui.guard.info(
          `/diff ${cmd.turn} is a chat's turn: open the chat (/session <id>); a plan's /diff takes none`,
        );
      return onPlan(tui, async () => {
        if (store.get().view !== 'plan') store.dispatch({ type: 'view', view: 'plan' });
        await plans.toggleDiff();
      });
    case 'rollback':
      return onPlan(tui, () => plans.rollback(cmd.checkpoint));
    case 'correct':
      return onPlan(tui, () => plans.correct(cmd.text, cmd.mode));
    case 'approve':
      return store.get().view === 'chat' ? chat.answer({ decision: 'approve' }) : onPlan(tui, () => plans.approve());
    case 'reject': {
      const answer = cmd.guidance
        ? { decision: 'reject' as const, guidance: cmd.guidance }
        : { decision: 'reject' as const };
      return store.get().view === 'chat' ? chat.answer(answer) : onPlan(tui, () => plans.reject(cmd.guidance));
    }
    case 'refresh':
      return go(tui, store.get().view);
    case 'help':
      return store.dispatch({ type: 'help', open: true });
    case 'quit':
      return tui.guard.quit();
  }
}

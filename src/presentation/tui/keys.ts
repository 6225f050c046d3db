import type { Key } from 'ink';
import { go, nextView, runLine, type Tui } from './commands.ts';
import { SLASH_USAGE } from './slash.ts';
import type { View } from './state.ts';

/** Lines of the help overlay before wrapping (see HelpOverlay). */
const helpLength = (view: View): number => KEYS[view].length + SLASH_USAGE.length + 5;

/** The keys of each view, for the help overlay; the footer shows the first few. */
export const KEYS: Record<View, ReadonlyArray<readonly [string, string]>> = {
  sessions: [
    ['↑/↓', 'select'],
    ['Enter', 'open'],
    ['n', 'new session'],
    ['d', 'delete (then y)'],
    ['r', 'refresh'],
    ['Tab', 'next view'],
    ['/', 'command'],
    ['?/F1', 'help'],
    ['q', 'quit'],
  ],
  chat: [
    ['Enter', 'send'],
    ['Esc/Ctrl-C', 'cancel the streaming turn'],
    ['y/n/g', 'approve / reject / reject with guidance'],
    ['Tab', 'next view (empty line)'],
    ['/…', 'command'],
    ['?/F1', 'help (empty line)'],
    ['Ctrl-D', 'quit (empty line; or Ctrl-C twice)'],
  ],
  plans: [
    ['↑/↓', 'select'],
    ['Enter', 'open'],
    ['r', 'refresh'],
    ['Tab', 'next view'],
    ['/', 'command'],
    ['?/F1', 'help'],
    ['q', 'quit'],
  ],
  plan: [
    ['e', 'execute'],
    ['a', 'apply'],
    ['d', 'diff on/off'],
    ['c', 'correct the selected decision'],
    ['b', 'roll back one step (to the checkpoint before it)'],
    ['x', 'cancel the plan'],
    ['y/n/g', 'approve / reject / reject with guidance'],
    ['↑/↓', 'select a decision, or scroll the diff'],
    ['PgUp/PgDn', 'scroll the view or the diff'],
    ['r', 'refresh'],
    ['Esc/q', 'back to the plans'],
    ['/', 'command'],
    ['?/F1', 'help'],
  ],
};

/** F1 as terminals send it (xterm, VT220, the Linux console). */
export const isF1 = (input: string): boolean => /^(?:\x1b)?(?:OP|\[11~|\[\[A)$/.test(input); // eslint-disable-line no-control-regex -- F1 begins with ESC.

/** One key press: what it does in the current view and mode. `page`: the lines a page scroll moves. */
export function handleKey(tui: Tui, input: string, key: Key, page: number): void {
  const { store, chat, plans, guard } = tui;
  const s = store.get();
  const run = (p: Promise<void>): void => void p.catch((err: unknown) => guard.report(err));
  if (s.help) {
    if (key.escape || input === 'q' || input === '?') store.dispatch({ type: 'help', open: false });
    const delta = key.upArrow ? -1 : key.downArrow ? 1 : key.pageUp ? -page : key.pageDown ? page : 0;
    if (delta) store.dispatch({ type: 'help-scroll', delta, max: helpLength(s.view) - page });
    return;
  }
  const typing = s.inputMode !== 'none';
  const ctrlC = key.ctrl && input === 'c';
  // Only a Ctrl-C right after the first leaves.
  if (s.leaveArmed && !ctrlC) store.dispatch({ type: 'leave-armed', on: false });
  if (input === '?' && (!typing || s.input === '')) return store.dispatch({ type: 'help', open: true });
  if (key.ctrl && input === 'd') {
    if (s.input === '') guard.quit();
    return;
  }
  if (ctrlC) {
    if (s.streaming) return run(chat.cancelTurn());
    if (s.input) return store.dispatch({ type: 'input', text: '' });
    // Nothing to cancel or clear: a second Ctrl-C leaves, so that one pressed as a turn ends does not.
    if (s.leaveArmed) return guard.quit();
    store.dispatch({ type: 'leave-armed', on: true });
    return guard.info('Ctrl-C again leaves (so do Ctrl-D on an empty line, /quit, q in a list)');
  }
  if (s.confirmDelete) {
    if (input === 'y') return run(chat.deleteSession(s.confirmDelete));
    store.dispatch({ type: 'confirm-delete', session: undefined });
    return guard.info('kept the session');
  }
  if (typing) return typed(tui, input, key, run);
  // A command typed fast or pasted comes as one chunk, with its Enter if it has one.
  if (input.startsWith('/')) {
    store.dispatch({ type: 'input', text: '', mode: 'line' });
    return typed(tui, input, key, run);
  }
  if (key.tab) return run(nextView(tui));
  const approvalWaits = s.view === 'chat' ? s.approval !== undefined : s.view === 'plan' && !!s.plan.status?.waiting;
  if (approvalWaits) {
    if (input === 'y') return run(s.view === 'chat' ? chat.answer({ decision: 'approve' }) : plans.approve());
    if (input === 'n') return run(s.view === 'chat' ? chat.answer({ decision: 'reject' }) : plans.reject());
    if (input === 'g') return store.dispatch({ type: 'input', text: '', mode: 'guidance' });
  }
  switch (s.view) {
    case 'sessions':
      if (key.upArrow || key.downArrow)
        return store.dispatch({ type: 'select', list: 'sessions', delta: key.upArrow ? -1 : 1 });
      if (key.return) {
        const picked = s.sessions[s.sessionIndex];
        return picked ? run(chat.openSession(picked.id)) : guard.info('no sessions yet: n starts one');
      }
      if (input === 'n') return run(chat.newSession({ name: 'new', skills: [] }));
      if (input === 'd') return run(runLine(tui, '/delete'));
      if (input === 'r') return run(chat.loadSessions());
      if (input === 'q') return guard.quit();
      return;
    case 'chat':
      // Only an approval prompt takes the chat's line away: Esc gives it back, to answer in words.
      if (key.escape) return store.dispatch({ type: 'input', text: '', mode: 'line' });
      return;
    case 'plans':
      if (key.upArrow || key.downArrow)
        return store.dispatch({ type: 'select', list: 'plans', delta: key.upArrow ? -1 : 1 });
      if (key.return) {
        const picked = s.plans[s.planIndex];
        return picked ? run(plans.open(picked.planId)) : guard.info('no plans yet: /plan use <action> <project>');
      }
      if (input === 'r') return run(plans.loadPlans());
      if (input === 'q') return guard.quit();
      return;
    case 'plan':
      return planKey(tui, input, key, page, run);
  }
}

function planKey(tui: Tui, input: string, key: Key, page: number, run: (p: Promise<void>) => void): void {
  const { store, plans } = tui;
  const p = store.get().plan;
  // Wrapped lines can make the diff a little longer on screen; the view clamps what it shows.
  const max = p.showDiff ? (p.diff ?? '').split('\n').length - page : 10_000;
  const scroll = (delta: number): void => store.dispatch({ type: 'scroll', delta, max });
  if (key.upArrow || key.downArrow) {
    const delta = key.upArrow ? -1 : 1;
    return p.showDiff ? scroll(delta) : store.dispatch({ type: 'select-decision', delta });
  }
  if (key.pageUp || key.pageDown) return scroll(key.pageUp ? -page : page);
  if (key.escape || input === 'q') return run(go(tui, 'plans'));
  const actions: Record<string, () => void> = {
    e: () => run(plans.execute()),
    a: () => run(plans.apply()),
    d: () => run(plans.toggleDiff()),
    b: () => run(plans.rollback()),
    x: () => run(plans.cancel()),
    r: () => run(plans.refresh()),
    c: () => store.dispatch({ type: 'input', text: '', mode: 'correct' }),
  };
  actions[input]?.();
}

/** A key while the input line is open: editing, Enter to submit, Esc to leave it. */
function typed(tui: Tui, input: string, key: Key, run: (p: Promise<void>) => void): void {
  const { store, chat } = tui;
  const s = store.get();
  const closeTo = s.view === 'chat' && !s.approval ? 'line' : 'none';
  if (key.escape) {
    if (s.streaming) return run(chat.cancelTurn());
    return store.dispatch({ type: 'input', text: '', mode: closeTo });
  }
  if (key.tab) return s.input === '' && s.inputMode === 'line' ? run(nextView(tui)) : undefined;
  if (key.backspace || key.delete) return store.dispatch({ type: 'input', text: [...s.input].slice(0, -1).join('') });
  if (key.return) return submit(tui, s.input, closeTo, run);
  if (key.ctrl || key.meta || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return;
  if (!input) return;
  // Keys typed faster than a frame (over SSH, or a paste) arrive as one chunk: a line break at its
  // end is the Enter of that line; line breaks inside it are spaces (one message, one line).
  const chunk = input.replace(/\r\n?/g, '\n');
  const ended = chunk.endsWith('\n');
  const text = s.input + chunk.replace(/\n+$/, '').replace(/\n/g, ' ');
  if (ended) return submit(tui, text, closeTo, run);
  store.dispatch({ type: 'input', text });
}

/** The input line submitted: an answer, a correction, a command or a chat message. */
function submit(tui: Tui, line: string, closeTo: 'line' | 'none', run: (p: Promise<void>) => void): void {
  const { store, chat, plans } = tui;
  const s = store.get();
  const text = line.trim();
  store.dispatch({ type: 'input', text: '', mode: closeTo });
  if (!text) return;
  if (s.inputMode === 'guidance')
    return run(s.view === 'chat' ? chat.answer({ decision: 'reject', guidance: text }) : plans.reject(text));
  if (s.inputMode === 'correct') return run(plans.correct(text, 'revert'));
  if (text.startsWith('/')) return run(runLine(tui, text));
  if (s.view === 'chat') return run(chat.send(text));
  return tui.guard.info('commands start with / (try /help)');
}

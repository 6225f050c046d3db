import { render } from 'ink';
import type { A2AClient } from '../../protocol/client/index.ts';
import type { Target } from '../cli/render/error.render.ts';
import type { CliIo } from '../cli/render/ui.ts';
import { App } from './App.tsx';
import { ChatController } from './chat-controller.ts';
import type { Tui } from './commands.ts';
import { Guard, type TuiExit } from './guard.ts';
import { PlanController } from './plan-controller.ts';
import { SessionCommands } from './session-commands.ts';
import { Store } from './store.ts';
import { ColorContext } from './theme.tsx';

export { PLAN_VIEW_CALLS } from './plan-controller.ts';
export type { TuiExit } from './guard.ts';

export interface TuiOptions {
  io: CliIo;
  target: Target;
  color: boolean;
  /** Aborted when the process is told to stop (SIGINT from outside the terminal): the TUI leaves. */
  signal: AbortSignal;
  /** Open this session first (else the sessions list). */
  session?: string | undefined;
}

// Alternate screen on/off, cursor shown: what a full-screen program leaves the terminal with.
const ENTER = '\u001b[?1049h\u001b[H';
const LEAVE = '\u001b[?25h\u001b[?1049l';

/** Builds the TUI's state and controllers over a connected client (local or server, the same code). */
export function createTui(client: A2AClient, target: Target, cwd: string = process.cwd()): Tui {
  const store = new Store();
  const guard = new Guard(store, target);
  return {
    store,
    guard,
    chat: new ChatController(client, store, guard, cwd),
    session: new SessionCommands(client, store, guard),
    plans: new PlanController(client, store, guard),
  };
}

/**
 * Runs `agents tui` full-screen until the user leaves (or the local agent dies), then puts the
 * terminal back as it was: main screen, cursor shown, raw mode off.
 */
export async function runTui(client: A2AClient, opts: TuiOptions): Promise<TuiExit> {
  const tui = createTui(client, opts.target);
  const stdout = opts.io.stdout;
  stdout.write(ENTER);
  const where = opts.target.kind === 'server' ? `server ${opts.target.url}` : 'local agent';
  const app = render(
    <ColorContext.Provider value={opts.color}>
      <App tui={tui} where={where} />
    </ColorContext.Provider>,
    {
      stdout,
      stdin: opts.io.stdin,
      exitOnCtrlC: false,
      patchConsole: true,
      // `agents tui` runs only on a terminal (the command refuses pipes), and there it is interactive
      // whatever CI or CONTINUOUS_INTEGRATION say (a developer's shell, a CI job's tmux): without
      // this, ink believes it runs in CI and draws nothing until it exits.
      interactive: true,
    },
  );
  const onAbort = (): void => tui.guard.quit({ reason: 'INTERRUPTED' });
  opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (opts.session) await tui.chat.openSession(opts.session);
    else await tui.chat.loadSessions();
    return await tui.guard.done;
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    tui.plans.close();
    await tui.chat.cancelTurn().catch(() => undefined);
    app.unmount();
    await app.waitUntilExit().catch(() => undefined);
    stdout.write(LEAVE);
  }
}

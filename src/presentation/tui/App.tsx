import { EventEmitter } from 'node:events';
import { Box, useInput, useStdin, useStdout, type StdinProps } from 'ink';
import { useEffect, useState, useSyncExternalStore, type ReactNode } from 'react';
import { ChatPane } from './ChatPane.tsx';
import type { Tui } from './commands.ts';
import { Footer, InputLine, StatusLine, statusRows } from './Bottom.tsx';
import { Header } from './Header.tsx';
import { HelpOverlay } from './HelpOverlay.tsx';
import { handleKey, isF1 } from './keys.ts';
import { PlansList } from './PlansList.tsx';
import { PlanView } from './PlanView.tsx';
import { SessionsList } from './SessionsList.tsx';

/** Ink types its stdout as any writable stream; a terminal's also has a size. */
type Screen = NodeJS.WritableStream & { columns?: number; rows?: number };

/**
 * The terminal's size, followed as it is resized (SIGWINCH reaches the stream as `resize`). Not
 * ink's `useWindowSize`: for a stream without a size (a test's) it asks the controlling terminal,
 * so a screen laid out in a test would depend on the terminal the tests run in; 80×24 does not.
 */
export function useScreenSize(): { columns: number; rows: number } {
  const stdout: Screen = useStdout().stdout;
  const read = (): { columns: number; rows: number } => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = (): void => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}

/**
 * The emitter ink feeds `useInput` from, one raw chunk per key. Ink 7 dropped it from the type of
 * `useStdin()` (the object still carries it) and offers no other way to see a function key; should
 * a later ink remove it, F1 stops opening the help and `?` still does.
 */
function rawInput(stdin: StdinProps): EventEmitter | undefined {
  const emitter = (stdin as StdinProps & { internal_eventEmitter?: unknown }).internal_eventEmitter;
  return emitter instanceof EventEmitter ? emitter : undefined;
}

/** Lines the header, input and footer take (the status line takes one to three more). */
const CHROME = 3;

/** The whole screen: header, the view (or the help over it), status line, input line, footer. */
export function App({ tui, where }: { tui: Tui; where: string }): ReactNode {
  const state = useSyncExternalStore(tui.store.subscribe, tui.store.get);
  const { columns, rows } = useScreenSize();
  const width = Math.max(20, columns);
  const status = statusRows(state, width);
  const body = Math.max(3, rows - CHROME - status.length);
  useInput((input, key) => handleKey(tui, input, key, Math.max(1, body - 2)));
  // useInput reports every function key as an empty input: F1 is told apart on the raw sequence.
  const raw = rawInput(useStdin());
  useEffect(() => {
    if (!raw) return;
    const onRaw = (data: string): void => {
      if (isF1(data)) tui.store.dispatch({ type: 'help', open: !tui.store.get().help });
    };
    raw.on('input', onRaw);
    return () => {
      raw.off('input', onRaw);
    };
  }, [raw, tui]);
  const view = state.help ? (
    <HelpOverlay view={state.view} scroll={state.helpScroll} height={body} width={width} />
  ) : state.view === 'sessions' ? (
    <SessionsList state={state} height={body} width={width} />
  ) : state.view === 'chat' ? (
    <ChatPane state={state} height={body} width={width} />
  ) : state.view === 'plans' ? (
    <PlansList state={state} height={body} width={width} />
  ) : (
    <PlanView state={state} height={body} width={width} />
  );
  return (
    <Box flexDirection="column" width={width} height={Math.max(rows, CHROME + status.length + 3)}>
      <Header state={state} where={where} width={width} />
      <Box flexDirection="column" height={body} overflow="hidden">
        {view}
      </Box>
      <StatusLine state={state} rows={status} />
      <InputLine state={state} width={width} />
      <Footer state={state} width={width} />
    </Box>
  );
}

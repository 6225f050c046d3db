import { Box } from 'ink';
import type { ReactNode } from 'react';
import { KEYS } from './keys.ts';
import { errorLines, truncate, wrap } from './lines.ts';
import type { TuiState } from './state.ts';
import { Toned } from './theme.tsx';

/** An error and its hint are read whole: the status line grows to this many rows for them. */
const STATUS_ROWS = 3;

/** The last message as the rows it takes: an error with its hint wrapped, anything else one row. */
export function statusRows(state: TuiState, width: number): string[] {
  const n = state.notice;
  if (!n) return [' '];
  if (n.level === 'info') return [truncate(n.text, width)];
  const rows = wrap(errorLines(n.report).join(' · '), width).map((l) => l.text);
  if (rows.length <= STATUS_ROWS) return rows;
  return [...rows.slice(0, STATUS_ROWS - 1), truncate(rows.slice(STATUS_ROWS - 1).join(''), width)];
}

/** The last message: an error with its hint (red), or what just happened. */
export function StatusLine({ state, rows }: { state: TuiState; rows: string[] }): ReactNode {
  return (
    <Box height={rows.length} flexDirection="column">
      {rows.map((row, i) => (
        <Toned key={i} tone={state.notice?.level === 'error' ? 'error' : 'meta'}>
          {row}
        </Toned>
      ))}
    </Box>
  );
}

const PROMPTS = {
  line: '› ',
  guidance: 'guidance (what to do instead) › ',
  correct: 'correct the selected decision › ',
};

/** The input line: a chat message, a slash command, or the guidance the view asked for. */
export function InputLine({ state, width }: { state: TuiState; width: number }): ReactNode {
  if (state.inputMode === 'none') {
    const waits = state.view === 'chat' ? state.approval : state.view === 'plan' && state.plan.status?.waiting;
    const hint = waits ? 'y approve · n reject · g reject with guidance · / types a command' : '/ types a command';
    return (
      <Box height={1}>
        <Toned tone={waits ? 'warn' : 'meta'}>{truncate(hint, width)}</Toned>
      </Box>
    );
  }
  const prompt = PROMPTS[state.inputMode];
  // The end of a long line stays visible, like a shell's.
  const room = Math.max(1, width - prompt.length - 1);
  const chars = [...state.input];
  const shown = chars.length > room ? `…${chars.slice(chars.length - room + 1).join('')}` : state.input;
  return (
    <Box height={1}>
      <Toned tone="user">{`${prompt}${shown}█`}</Toned>
    </Box>
  );
}

/** The keys of the view, as many as fit. */
export function Footer({ state, width }: { state: TuiState; width: number }): ReactNode {
  const keys = state.help
    ? ([
        ['Esc', 'close help'],
        ['↑/↓ PgUp/PgDn', 'scroll'],
      ] as const)
    : KEYS[state.view];
  const text = keys.map(([k, what]) => `${k} ${what}`).join(' · ');
  return (
    <Box height={1}>
      <Toned tone="meta">{truncate(text, width)}</Toned>
    </Box>
  );
}

import { Box } from 'ink';
import type { ReactNode } from 'react';
import { KEYS } from './keys.js';
import { errorLines, truncate } from './lines.js';
import type { TuiState } from './state.js';
import { Toned } from './theme.js';

/** The last message: an error with its hint (red), or what just happened. */
export function StatusLine({ state, width }: { state: TuiState; width: number }): ReactNode {
  const n = state.notice;
  const text = !n ? '' : n.level === 'info' ? n.text : errorLines(n.report).join(' · ');
  return (
    <Box height={1}>
      <Toned tone={n?.level === 'error' ? 'error' : 'meta'}>{truncate(text || ' ', width)}</Toned>
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

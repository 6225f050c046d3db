import { Box } from 'ink';
import type { ReactNode } from 'react';
import { KEYS } from './keys.ts';
import { wrap, type Line } from './lines.ts';
import { SLASH_USAGE } from './slash.ts';
import type { View } from './state.ts';
import { Lines } from './theme.tsx';

/** Every key of the view and every slash command. */
export function helpLines(view: View, width: number): Line[] {
  const keys = KEYS[view];
  const kw = Math.max(...keys.map(([k]) => k.length));
  const cw = Math.min(58, Math.max(...SLASH_USAGE.map(([c]) => c.length)));
  return [
    { text: `Keys (${view})`, tone: 'head' },
    ...keys.flatMap(([k, what]) => wrap(`  ${k.padEnd(kw)}  ${what}`, width)),
    { text: '' },
    { text: 'Commands (type in the input line)', tone: 'head' },
    ...SLASH_USAGE.flatMap(([c, what]) => wrap(`  ${c.padEnd(cw)}  ${what}`, width)),
    { text: '' },
    { text: 'Esc, q, ? or F1 closes this help; ↑/↓ PgUp/PgDn scroll it', tone: 'meta' },
  ];
}

export function HelpOverlay({
  view,
  scroll,
  height,
  width,
}: {
  view: View;
  scroll: number;
  height: number;
  width: number;
}): ReactNode {
  const all = helpLines(view, width);
  const top = Math.max(0, Math.min(scroll, all.length - height));
  return (
    <Box flexDirection="column" height={height}>
      <Lines lines={all.slice(top, top + height)} />
    </Box>
  );
}

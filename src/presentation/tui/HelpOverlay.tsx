import { Box } from 'ink';
import type { ReactNode } from 'react';
import { KEYS } from './keys.ts';
import { wrap, type Line } from './lines.ts';
import { SLASH_USAGE } from './slash.ts';
import type { View } from './state.ts';
import { Lines } from './theme.tsx';

/** The commands of a view's own (the chat's on its session, the plan's on the plan): its help lists them first. */
const OWN: Partial<Record<View, RegExp>> = {
  chat: /^\/(undo|model|diff|compact|cost|clear|tools|context)\b/,
  plan: /^\/(execute|apply|approve|rollback|correct|cancel|diff)\b/,
};

/** Every key of the view and every slash command (the view's own first). */
export function helpLines(view: View, width: number): Line[] {
  const keys = KEYS[view];
  const first = (c: string): number => (OWN[view]?.test(c) ? 0 : 1);
  const commands = [...SLASH_USAGE].sort(([a], [b]) => first(a) - first(b));
  const kw = Math.max(...keys.map(([k]) => k.length));
  const cw = Math.min(58, Math.max(...SLASH_USAGE.map(([c]) => c.length)));
  return [
    { text: `Keys (${view})`, tone: 'head' },
    ...keys.flatMap(([k, what]) => wrap(`  ${k.padEnd(kw)}  ${what}`, width)),
    { text: '' },
    { text: 'Commands (type in the input line)', tone: 'head' },
    ...commands.flatMap(([c, what]) => wrap(`  ${c.padEnd(cw)}  ${what}`, width)),
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

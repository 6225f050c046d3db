import { Box } from 'ink';
import type { ReactNode } from 'react';
import { truncate } from './lines.ts';
import { Toned } from './theme.tsx';

/** A selectable list: the selected row marked with `›`, scrolled so that it stays on screen. */
export function ListView({
  rows,
  selected,
  height,
  width,
  empty,
}: {
  rows: readonly string[];
  selected: number;
  height: number;
  width: number;
  empty: string;
}): ReactNode {
  if (rows.length === 0) return <Toned tone="meta">{empty}</Toned>;
  const top = Math.max(0, Math.min(selected - Math.floor(height / 2), rows.length - height));
  return (
    <Box flexDirection="column">
      {rows.slice(top, top + height).map((r, i) => {
        const sel = top + i === selected;
        return (
          <Toned key={top + i} tone={sel ? 'user' : undefined}>
            {truncate(`${sel ? '›' : ' '} ${r}`, width)}
          </Toned>
        );
      })}
    </Box>
  );
}

import { Box } from 'ink';
import type { ReactNode } from 'react';
import { diffLines, planLines, wrap } from './lines.ts';
import type { TuiState } from './state.ts';
import { Lines } from './theme.tsx';

/** A plan: its state, tree, log and checkpoints; or, with `d`, its diff, scrolled with the arrows. */
export function PlanView({ state, height, width }: { state: TuiState; height: number; width: number }): ReactNode {
  const p = state.plan;
  if (p.showDiff) {
    const all = p.diff ? diffLines(p.diff, width) : wrap('no changes', width, 'meta');
    const top = Math.max(0, Math.min(p.scroll, all.length - (height - 1)));
    const shown = all.slice(top, top + height - 1);
    const where = `diff of ${p.status?.planId ?? ''} · lines ${all.length ? top + 1 : 0}-${top + shown.length} of ${all.length} · ↑/↓ PgUp/PgDn scroll · d closes`;
    return (
      <Box flexDirection="column" height={height}>
        <Lines lines={[...wrap(where, width, 'meta').slice(0, 1), ...shown]} />
      </Box>
    );
  }
  const lines = planLines(p, width);
  const top = Math.max(0, Math.min(p.scroll, lines.length - height));
  return (
    <Box flexDirection="column" height={height}>
      <Lines lines={lines.slice(top, top + height)} />
    </Box>
  );
}

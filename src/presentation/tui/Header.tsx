import { Box } from 'ink';
import type { ReactNode } from 'react';
import { truncate } from './lines.ts';
import type { TuiState } from './state.ts';
import { Toned } from './theme.tsx';

const TITLES = { sessions: 'Sessions', chat: 'Chat', plans: 'Plans', plan: 'Plan' } as const;

/** The top line: which view, which session or plan, where the agent is. */
export function Header({ state, where, width }: { state: TuiState; where: string; width: number }): ReactNode {
  const what =
    state.view === 'chat' && state.session
      ? ` · ${state.session.title ?? state.session.id} · ${state.session.actor}`
      : state.view === 'plan' && state.plan.status
        ? ` · ${state.plan.status.planId}`
        : '';
  const busy = state.busy || state.streaming ? ` · ${state.streaming ? 'streaming…' : `${state.busy}…`}` : '';
  return (
    <Box height={1}>
      <Toned tone="head">{truncate(`CleverAgents · ${TITLES[state.view]}${what} · ${where}${busy}`, width)}</Toned>
    </Box>
  );
}

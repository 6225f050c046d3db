import type { ReactNode } from 'react';
import type { TuiState } from './state.ts';
import { ListView } from './ListView.tsx';

/** Your sessions, most recently active first. */
export function SessionsList({ state, height, width }: { state: TuiState; height: number; width: number }): ReactNode {
  const rows = state.sessions.map(
    (s) =>
      `${s.id}  ${s.actor.padEnd(20)} ${String(s.taskCount).padStart(3)} turns  ${s.updatedAt.slice(0, 16).replace('T', ' ')}  ${s.title ?? ''}${s.project ? `  (${s.project})` : ''}`,
  );
  return (
    <ListView
      rows={rows}
      selected={state.sessionIndex}
      height={height}
      width={width}
      empty="no sessions yet: n starts one (or /new --actor A --project P)"
    />
  );
}

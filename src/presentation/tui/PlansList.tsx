import type { ReactNode } from 'react';
import type { TuiState } from './state.ts';
import { ListView } from './ListView.tsx';

/** Your plans, newest first. */
export function PlansList({ state, height, width }: { state: TuiState; height: number; width: number }): ReactNode {
  const rows = state.plans.map(
    (p) =>
      `${p.planId}  ${`${p.phase}/${p.state}`.padEnd(22)} ${`${p.progress.stepsDone}/${p.progress.stepsTotal}`.padStart(5)}  ${p.action}  ${p.projects.join(',')}  ${p.name}`,
  );
  return (
    <ListView
      rows={rows}
      selected={state.planIndex}
      height={height}
      width={width}
      empty="no plans yet: /plan use <action> <project> (e.g. /plan use builtin/replace api --arg pattern=a --arg replacement=b)"
    />
  );
}

import type { ConnectionState } from './connection.ts';
import { isRunning, type PlanStatus } from './plans.ts';

/** What the status-bar item shows; clicking it opens the plans view. */
export interface StatusBarView {
  visible: boolean;
  text: string;
  tooltip: string;
  command: string;
  /** A problem worth the user's eye (the item gets the error colour). */
  alert: boolean;
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

const phaseLine = (p: PlanStatus): string => {
  const steps = p.progress.stepsTotal > 0 ? ` ${p.progress.stepsDone}/${p.progress.stepsTotal}` : '';
  const waits = p.waiting ? ` — waits for ${p.waiting.kind === 'apply-approval' ? 'apply approval' : 'approval'}` : '';
  return `${p.name}: ${p.phase} ${p.state}${steps}${waits}`;
};

/**
 * The status bar for the running plans: how many run (and the phase when one does), how many
 * wait for an approval, or that the agent is down. Hidden when nothing runs and all is well.
 */
export function statusBarView(conn: ConnectionState, plans: readonly PlanStatus[]): StatusBarView {
  const command = 'cleveragents.showRunningPlans';
  if (conn.kind === 'failed' || conn.kind === 'exited')
    return {
      visible: true,
      alert: true,
      text: '$(error) CleverAgents',
      tooltip: `${conn.kind === 'exited' ? 'The agent stopped' : 'Cannot reach the agent'}: ${conn.error.message}${conn.error.hint ? `\n${conn.error.hint}` : ''}`,
      command,
    };
  // A plan that waits for an approval is not running: it needs the user, so it is counted apart.
  const waiting = plans.filter((p) => p.waiting !== undefined);
  const running = plans.filter((p) => isRunning(p) && p.waiting === undefined);
  if (running.length === 0 && waiting.length === 0)
    return { visible: false, alert: false, text: '', tooltip: '', command };
  const parts: string[] = [];
  const only = running.length === 1 ? running[0] : undefined;
  if (only)
    parts.push(
      `$(sync~spin) ${only.phase}${only.progress.stepsTotal > 0 ? ` ${only.progress.stepsDone}/${only.progress.stepsTotal}` : ''}`,
    );
  else if (running.length > 1) parts.push(`$(sync~spin) ${plural(running.length, 'plan', 'plans')} running`);
  if (waiting.length > 0) parts.push(`$(bell-dot) ${waiting.length} waiting`);
  return {
    visible: true,
    alert: false,
    text: parts.join('  '),
    tooltip: [...running, ...waiting].map(phaseLine).join('\n'),
    command,
  };
}

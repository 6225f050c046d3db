/** Policy rules and the verdicts they gave, on one line each (profile show, plan status, plan explain). */
import type { planExplain, planStatus, ResultOf } from '../../../protocol/client/index.ts';

/** A rule as the plan status shows the plan's copy of its profile (the same shape a profile's definition has). */
export type RuleLine = ResultOf<typeof planStatus>['policy']['rules'][number];
/** What decided one tool call, as plan explain reports it. */
export type VerdictLine = NonNullable<ResultOf<typeof planExplain>['toolCalls'][number]['policy']>;

/** One rule: `deny command "rm -rf *" — never delete trees`. */
export function ruleText(r: RuleLine): string {
  const on = [
    r.tool !== undefined ? `tool ${r.tool}` : '',
    r.command !== undefined ? `command "${r.command}"` : '',
    r.writes !== undefined ? (r.writes ? 'tools that write' : 'tools that write nothing') : '',
  ].filter(Boolean);
  return `${r.decision} ${on.join(', ')}${r.reason ? ` — ${r.reason}` : ''}`;
}

/** What decided a tool call: `denied by rule 2 of local/strict (deny command "rm *" — …)`. */
export function verdictText(v: VerdictLine): string {
  const done = v.decision === 'allow' ? 'allowed' : v.decision === 'ask' ? 'asked' : 'denied';
  if (!v.rule) return `${done} by the default of ${v.profile}`;
  return `${done} by rule ${v.rule.index + 1} of ${v.profile} (${ruleText({ ...v.rule, decision: v.decision })})`;
}

/** Policy rules and the verdicts they gave, on one line each (profile show, plan status, plan explain). */

export interface RuleLine {
  tool?: string | undefined;
  command?: string | undefined;
  writes?: boolean | undefined;
  decision: string;
  reason?: string | undefined;
}

export interface VerdictLine {
  decision: string;
  profile: string;
  rule?: (Omit<RuleLine, 'decision'> & { index: number }) | undefined;
  reason: string;
}

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

/**
 * Policy rules (automation profiles): what a tool call may do without a person. A profile has a
 * default decision and ordered rules; every rule that matches a call is found, a `deny` among them
 * wins, otherwise the first match decides, otherwise the default does. The decision is a pure
 * function of the profile and the call, so a plan can record which rule decided each call.
 *
 * Matching, precisely:
 * - `tool` is a glob on the tool's name (`builtin/run-command`, `builtin/*`, `local/fmt-*`).
 * - `command` is a pattern on the command line a call runs: its program and arguments joined with
 *   single spaces (`npm test`, `git commit -m wip`). A call that runs no command never matches a
 *   rule with `command`. The pattern is compared with the whole line (anchored at both ends) and
 *   with the line whose program is written without its directory (so `rm *` also matches
 *   `/bin/rm -rf x`).
 * - In both, `*` matches any run of characters (also none, also spaces and `/`); every other
 *   character matches itself. So `git *` matches `git status` but not a bare `git`.
 * - `writes` (true/false) matches tools that do (or do not) write files.
 * - A rule matches when every condition it has matches; it needs at least one.
 *
 * Rules decide what is asked; they are not a sandbox: `sh -c '…'` runs whatever it is given, so a
 * `deny` on a program is only as good as the rules for the programs that can start it.
 */
import type { DeepReadonly } from '../readonly.ts';
import { z } from 'zod';

export const POLICY_DECISIONS = ['allow', 'ask', 'deny'] as const;
export type PolicyDecision = (typeof POLICY_DECISIONS)[number];

const Pattern = z
  .string()
  .min(1, 'must not be empty')
  .max(500, 'is at most 500 characters')
  .refine((s) => s.trim() === s, 'must not start or end with a space');

export const PolicyRule = z
  .object({
    tool: Pattern.optional(),
    command: Pattern.refine((s) => !/\s{2,}/.test(s), 'separate words with single spaces').optional(),
    writes: z.boolean().optional(),
    decision: z.enum(POLICY_DECISIONS, { message: 'must be allow, ask or deny' }),
    reason: z.string().max(500, 'is at most 500 characters').optional(),
  })
  .strict()
  .refine((r) => r.tool !== undefined || r.command !== undefined || r.writes !== undefined, {
    message: 'a rule matches on tool, command or writes (for every call, set the profile default)',
    path: ['decision'],
  });
export type PolicyRule = z.infer<typeof PolicyRule>;

/** What a plan keeps of its profile at `use`: the profile may change later, the plan does not. */
export const PolicySnapshot = z.object({
  profile: z.string(),
  revision: z.number().int().positive(),
  contentHash: z.string(),
  default: z.enum(POLICY_DECISIONS),
  applyApproval: z.boolean(),
  rules: z.array(PolicyRule),
  takenAt: z.string(),
});
export type PolicySnapshot = z.infer<typeof PolicySnapshot>;

/** The rule that decided a call, as recorded with it (absent: the profile's default decided). */
export const PolicyVerdict = z.object({
  decision: z.enum(POLICY_DECISIONS),
  profile: z.string(),
  rule: z
    .object({
      index: z.number().int().nonnegative(),
      tool: z.string().optional(),
      command: z.string().optional(),
      writes: z.boolean().optional(),
      reason: z.string().optional(),
    })
    .optional(),
  /** In words: which rule (or the default) and why. */
  reason: z.string(),
});
export type PolicyVerdict = z.infer<typeof PolicyVerdict>;

/** A tool call as the policy sees it. */
export interface PolicyCall {
  tool: string;
  writes: boolean;
  /** Program and arguments, when the call runs a command. */
  command?: readonly string[] | undefined;
}

export type PolicyProfile = DeepReadonly<Pick<PolicySnapshot, 'profile' | 'default' | 'rules'>>;

const compiled = new Map<string, RegExp>();

/** `*` is any run of characters; everything else is literal; anchored at both ends. */
export function patternMatches(pattern: string, text: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    const body = pattern
      .split('*')
      .map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, '\\$&'))
      .join('[\\s\\S]*');
    re = new RegExp(`^${body}$`);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re.test(text);
}

/** The command line a pattern is compared with: program and arguments joined with single spaces. */
export function commandLineOf(argv: readonly string[]): string {
  return argv.join(' ');
}

function commandMatches(pattern: string, argv: readonly string[]): boolean {
  if (patternMatches(pattern, commandLineOf(argv))) return true;
  const [program, ...args] = argv;
  if (program === undefined || !program.includes('/')) return false;
  const bare = program.slice(program.lastIndexOf('/') + 1);
  return bare !== '' && patternMatches(pattern, commandLineOf([bare, ...args]));
}

export function ruleMatches(rule: PolicyRule, call: PolicyCall): boolean {
  if (rule.tool !== undefined && !patternMatches(rule.tool, call.tool)) return false;
  if (rule.writes !== undefined && rule.writes !== call.writes) return false;
  if (rule.command !== undefined && (!call.command || !commandMatches(rule.command, call.command))) return false;
  return true;
}

function describeRule(r: PolicyRule): string {
  const parts = [
    r.tool !== undefined ? `tool ${r.tool}` : '',
    r.command !== undefined ? `command "${r.command}"` : '',
    r.writes !== undefined ? (r.writes ? 'tools that write' : 'tools that do not write') : '',
  ].filter(Boolean);
  return parts.join(', ');
}

const VERB: Record<PolicyDecision, string> = { allow: 'allows it', ask: 'asks first', deny: 'denies it' };

/** Decides one tool call: a matching deny wins, else the first matching rule, else the default. */
export function decideCall(profile: PolicyProfile, call: PolicyCall): PolicyVerdict {
  const matching = profile.rules.map((rule, index) => ({ rule, index })).filter((m) => ruleMatches(m.rule, call));
  const chosen = matching.find((m) => m.rule.decision === 'deny') ?? matching[0];
  if (!chosen)
    return {
      decision: profile.default,
      profile: profile.profile,
      reason: `no rule of ${profile.profile} matches: its default is ${profile.default}`,
    };
  const { rule, index } = chosen;
  const verdict: PolicyVerdict = {
    decision: rule.decision,
    profile: profile.profile,
    rule: { index, ...stripUndefined(rule) },
    reason: `rule ${index + 1} of ${profile.profile} (${describeRule(rule)}) ${VERB[rule.decision]}${rule.reason ? ` — ${rule.reason}` : ''}`,
  };
  return verdict;
}

function stripUndefined(r: PolicyRule): Omit<NonNullable<PolicyVerdict['rule']>, 'index'> {
  const out: Omit<NonNullable<PolicyVerdict['rule']>, 'index'> = {};
  if (r.tool !== undefined) out.tool = r.tool;
  if (r.command !== undefined) out.command = r.command;
  if (r.writes !== undefined) out.writes = r.writes;
  if (r.reason !== undefined) out.reason = r.reason;
  return out;
}

/**
 * A tool-calling loop's verdict on a model's call (chat turns, goal plans): the profile's, where a
 * tool not known to only read is asked about as one that writes, and a read-only tool is never
 * asked about (a rule may still deny it).
 */
export function decideToolCall(
  profile: PolicyProfile,
  call: { tool: string; readOnly: boolean; writes: boolean; command: string[] | undefined },
): PolicyVerdict {
  const verdict = decideCall(profile, {
    tool: call.tool,
    writes: call.writes || !call.readOnly,
    command: call.command,
  });
  if (call.readOnly && verdict.decision === 'ask')
    return { ...verdict, decision: 'allow', reason: `${call.tool} only reads` };
  return verdict;
}

/**
 * "Always" answers to an approval request: the tool runs without asking again in this session (or
 * plan) — every call of it, or, for a command, the calls whose command line starts with the same
 * words (the program and its subcommand: `npm test`, `git status`; `ls -la` → `ls`).
 */
import type { AlwaysRule } from './agent.types.ts';

/** The words of a command line an "always" answer covers. */
export function commandPrefix(command: readonly string[]): string[] {
  const [program, second] = command;
  if (program === undefined) return [];
  return second !== undefined && /^[a-z][\w:.-]*$/i.test(second) ? [program, second] : [program];
}

/** The rule an "always" answer makes for a call (`command`: its command's prefix, when it runs one). */
export function ruleOf(
  tool: { ref: string },
  always: 'tool' | 'command',
  command: readonly string[] | undefined,
): AlwaysRule {
  return always === 'command' && command && command.length > 0
    ? { tool: tool.ref, commandPrefix: commandPrefix(command) }
    : { tool: tool.ref };
}

/** Whether a call is covered by one of the rules. */
export function alwaysMatches(
  rules: readonly AlwaysRule[],
  tool: string,
  command: readonly string[] | undefined,
): boolean {
  return rules.some((r) => {
    if (r.tool !== tool) return false;
    if (!r.commandPrefix) return true;
    const prefix = r.commandPrefix;
    return command !== undefined && prefix.length <= command.length && prefix.every((w, i) => command[i] === w);
  });
}

/** A rule in words, for a status line or a record. */
export function ruleText(r: AlwaysRule): string {
  return r.commandPrefix ? `${r.tool} running \`${r.commandPrefix.join(' ')} …\`` : `every call of ${r.tool}`;
}

import type { Plan } from '../../../domain/plan/plan.ts';

/** The goal as both plan actors are told it: what, when it is done, the invariants, the verify command. */
export function goalBrief(plan: Plan): string {
  const parts = [`Goal: ${plan.description}`, `Definition of done: ${plan.definitionOfDone}`];
  const inv = plan.invariants ?? [];
  if (inv.length)
    parts.push(
      `Invariants (they must hold throughout):\n${inv.map((i) => `- ${i.text} (${i.source}${i.from ? ` ${i.from}` : ''})`).join('\n')}`,
    );
  if (plan.verify)
    parts.push(
      `Verify command: \`${plan.verify.command}\` (from ${plan.verify.source}); it is run in the sandbox at the end of execute and its exit status decides whether the definition of done is met.`,
    );
  return parts.join('\n\n');
}

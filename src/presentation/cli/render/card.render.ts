import { getExtendedAgentCard, type ResultOf } from '../../../protocol/client/index.ts';
import { CliError } from '../exit-codes.ts';
import { renderFields } from './table.ts';
import type { Ui } from './ui.ts';

/** An Agent Card as the card contract types it. */
export type AgentCard = ResultOf<typeof getExtendedAgentCard>;

/** The card as the card contract types it; a card without that shape is the agent's error, not ours. */
export function readCard(raw: unknown): AgentCard {
  const r = getExtendedAgentCard.result.safeParse(raw);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(card)'}: ${i.message}`).join('; ');
  throw new CliError(`The agent's card is not an A2A Agent Card: ${problems}`, 'INTERNAL', 'InvalidAgentCard');
}

/** `agents card`: name, version, provider, capabilities, extensions, interfaces and skills. */
export function renderCard(card: AgentCard, ui: Ui): string {
  const caps = card.capabilities;
  const capNames = Object.entries(caps)
    .filter(([, v]) => v === true)
    .map(([k]) => k);
  const extensions = (caps.extensions ?? []).map((e) => e.uri);
  const interfaces = card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`.trim());
  const skills = card.skills.map((s) => s.id);
  const fields: Array<readonly [string, string | undefined]> = [
    ['version', card.version],
    ['description', card.description],
    ['provider', card.provider?.organization],
    ['capabilities', capNames.join(', ')],
    ['extensions', extensions.join(', ')],
    ['interfaces', interfaces.join(ui.rich ? '\n' : ', ')],
    ['skills', skills.join(', ')],
  ];
  if (!ui.rich) return renderFields([['name', card.name], ...fields], ui.mode);
  return `${ui.pal.bold(card.name)}\n${renderFields(fields, ui.mode)}`;
}

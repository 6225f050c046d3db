import { z } from 'zod';
import { bindFamily } from '../method.ts';
import * as c from '../contracts/card.contract.ts';

/** The card family bound to the facade (its contracts, for clients too, are in contracts/card.contract.ts). */
export const CARD_ROWS = bindFamily(c.CARD_METHODS, {
  getExtendedAgentCard: (_facade, _p, ctx) =>
    Promise.resolve(ctx.card.extendedCard(ctx.principal, ctx.version) as z.input<typeof c.AgentCardSchema>),
});

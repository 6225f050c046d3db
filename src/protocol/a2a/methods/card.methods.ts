import { z } from 'zod';
import { bindUnary } from '../method.ts';
import * as c from '../contracts/card.contract.ts';

/** The card contracts bound to the facade (the contracts, for clients too, are in contracts/card.contract.ts). */
export const getExtendedAgentCard = bindUnary(c.getExtendedAgentCard, (_facade, _p, ctx) =>
  Promise.resolve(ctx.card.extendedCard(ctx.principal, ctx.version) as z.input<typeof c.AgentCardSchema>),
);

import { z } from 'zod';
import type { SendInput } from '../../../application/index.ts';
import { bindFamily } from '../method.ts';
import * as c from '../contracts/message.contract.ts';

/**
 * A send request as the task service takes it. The tenant goes no further as a field: the
 * dispatcher's authorize step checks the caller's role in it and makes it the namespace the call
 * acts in (`principal.namespace`), which is where the task lives and who sees it.
 */
export function toSendInput(p: z.output<typeof c.SendMessageRequest>): SendInput {
  return { message: p.message, configuration: p.configuration, metadata: p.metadata };
}

/** The message family bound to the facade (its contracts, for clients too, are in contracts/message.contract.ts). */
export const MESSAGE_ROWS = bindFamily(c.MESSAGE_METHODS, {
  sendMessage: (facade, p, ctx) => facade.tasks.send(toSendInput(p), ctx.principal),
  sendStreamingMessage: (facade, p, ctx) => facade.tasks.stream(toSendInput(p), ctx.principal),
});

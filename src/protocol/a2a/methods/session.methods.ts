import { bindUnary } from '../method.ts';
import * as c from '../contracts/session.contract.ts';

/** The session contracts bound to the facade (the contracts, for clients too, are in contracts/session.contract.ts). */
export const sessionCreate = bindUnary(c.sessionCreate, (facade, p, ctx) => facade.sessions.create(p, ctx.principal));
export const sessionList = bindUnary(c.sessionList, (facade, p, ctx) =>
  facade.sessions.list(ctx.principal, p.pageSize ?? 50, p.pageToken),
);
export const sessionShow = bindUnary(c.sessionShow, (facade, p, ctx) =>
  facade.sessions.show(p.sessionId, ctx.principal, p.turns ?? 100),
);
export const sessionDelete = bindUnary(c.sessionDelete, (facade, p, ctx) =>
  facade.deleteSession(p.sessionId, ctx.principal),
);
export const sessionCompact = bindUnary(c.sessionCompact, (facade, p, ctx) =>
  facade.compaction.compact(p.sessionId, ctx.principal, { keepTurns: p.keepTurns, signal: ctx.signal }),
);
export const sessionFork = bindUnary(c.sessionFork, (facade, p, ctx) =>
  facade.sessions.fork(p.sessionId, { atTaskId: p.atTaskId, title: p.title }, ctx.principal),
);
export const sessionResume = bindUnary(c.sessionResume, (facade, p, ctx) =>
  facade.sessions.resume(p.sessionId, ctx.principal, p.turns ?? 3),
);
export const sessionUndo = bindUnary(c.sessionUndo, (facade, p, ctx) =>
  facade.turnHistory.undo(ctx.principal, p.sessionId, { turn: p.turn, force: p.force }),
);

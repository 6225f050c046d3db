import { bindFamily } from '../method.ts';
import * as c from '../contracts/session.contract.ts';

/** The session family bound to the facade (its contracts, for clients too, are in contracts/session.contract.ts). */
export const SESSION_ROWS = bindFamily(c.SESSION_METHODS, {
  sessionCreate: (facade, p, ctx) => facade.sessions.create(p, ctx.principal),
  sessionList: (facade, p, ctx) => facade.sessions.list(ctx.principal, p.pageSize ?? 50, p.pageToken, p.project),
  sessionShow: (facade, p, ctx) => facade.sessions.show(p.sessionId, ctx.principal, p.turns ?? 100),
  sessionDelete: (facade, p, ctx) => facade.deleteSession(p.sessionId, ctx.principal),
  sessionCompact: (facade, p, ctx) =>
    facade.compaction.compact(p.sessionId, ctx.principal, { keepTurns: p.keepTurns, signal: ctx.signal }),
  sessionFork: (facade, p, ctx) =>
    facade.sessions.fork(p.sessionId, { atTaskId: p.atTaskId, title: p.title }, ctx.principal),
  sessionResume: (facade, p, ctx) => facade.sessions.resume(p.sessionId, ctx.principal, p.turns ?? 3),
  sessionUndo: (facade, p, ctx) =>
    facade.turnHistory.undo(ctx.principal, p.sessionId, { turn: p.turn, force: p.force }),
  sessionUpdate: (facade, p, ctx) =>
    facade.sessions.update(p.sessionId, { actor: p.actor, skills: p.skills, context: p.context }, ctx.principal),
  sessionDiff: (facade, p, ctx) => facade.turnHistory.diff(ctx.principal, p.sessionId, p.turn),
  sessionContext: (facade, p, ctx) =>
    facade.sessionContext.preview(p.sessionId, ctx.principal, { message: p.message, signal: ctx.signal }),
});

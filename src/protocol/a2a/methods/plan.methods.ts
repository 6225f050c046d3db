import { bindUnary } from '../method.ts';
import * as c from '../contracts/plan.contract.ts';
import * as h from '../contracts/plan-housekeeping.contract.ts';

/** The plan contracts bound to the facade (the contracts, for clients too, are in contracts/plan.contract.ts). */
export const planUse = bindUnary(c.planUse, (f, p, ctx) => f.plans.use(p, ctx.principal));
export const planExecute = bindUnary(c.planExecute, (f, p, ctx) => f.plans.execute(p.planId, p, ctx.principal));
export const planApply = bindUnary(c.planApply, (f, p, ctx) => f.plans.apply(p.planId, p, ctx.principal));
export const planCancel = bindUnary(c.planCancel, (f, p, ctx) =>
  f.plans.cancel(p.planId, p.reason, ctx.principal, { clean: p.clean }),
);
export const planStatus = bindUnary(c.planStatus, (f, p, ctx) => f.planQueries.status(p.planId, ctx.principal));
export const planTree = bindUnary(c.planTree, (f, p, ctx) =>
  f.planQueries.tree(p.planId, p.showSuperseded ?? false, ctx.principal),
);
export const planExplain = bindUnary(c.planExplain, (f, p, ctx) =>
  f.planQueries.explain(p.decisionId, ctx.principal, p.planId),
);
export const planCorrect = bindUnary(c.planCorrect, (f, p, ctx) =>
  f.planCorrections.correct(p, ctx.principal, p.planId),
);
export const planDiff = bindUnary(c.planDiff, (f, p, ctx) => f.planQueries.diff(p.planId, ctx.principal));
export const planArtifacts = bindUnary(c.planArtifacts, (f, p, ctx) =>
  f.planQueries.artifacts(p.planId, ctx.principal),
);
export const planPrompt = bindUnary(c.planPrompt, (f, p, ctx) => f.plans.prompt(p.planId, p.guidance, ctx.principal));
export const planApprove = bindUnary(c.planApprove, (f, p, ctx) => f.planAnswers.approve(p.planId, p, ctx.principal));
export const planReject = bindUnary(c.planReject, (f, p, ctx) => f.planAnswers.reject(p.planId, p, ctx.principal));
export const planRollback = bindUnary(c.planRollback, (f, p, ctx) =>
  f.plans.rollback(p.checkpointId, ctx.principal, p.planId),
);
export const planList = bindUnary(c.planList, (f, p, ctx) => f.planQueries.list(p, ctx.principal));
export const planRebase = bindUnary(h.planRebase, (f, p, ctx) => f.planHousekeeping.rebase(p.planId, p, ctx.principal));
export const planDelete = bindUnary(h.planDelete, (f, p, ctx) => f.planHousekeeping.delete(p.planId, p, ctx.principal));
export const planPrune = bindUnary(h.planPrune, (f, p, ctx) => f.planHousekeeping.prune(p, ctx.principal));

import { bindFamily } from '../method.ts';
import * as c from '../contracts/plan.contract.ts';
import * as h from '../contracts/plan-housekeeping.contract.ts';

/** The plan family bound to the facade (its contracts, for clients too, are in contracts/plan.contract.ts). */
export const PLAN_ROWS = bindFamily(c.PLAN_METHODS, {
  planUse: (f, p, ctx) => f.plans.use(p, ctx.principal),
  planExecute: (f, p, ctx) => f.plans.execute(p.planId, p, ctx.principal),
  planApply: (f, p, ctx) => f.plans.apply(p.planId, p, ctx.principal),
  planCancel: (f, p, ctx) => f.plans.cancel(p.planId, p.reason, ctx.principal, { clean: p.clean }),
  planStatus: (f, p, ctx) => f.planQueries.status(p.planId, ctx.principal),
  planTree: (f, p, ctx) => f.planQueries.tree(p.planId, p.showSuperseded ?? false, ctx.principal),
  planExplain: (f, p, ctx) => f.planQueries.explain(p.decisionId, ctx.principal, p.planId),
  planCorrect: (f, p, ctx) => f.planCorrections.correct(p, ctx.principal, p.planId),
  planDiff: (f, p, ctx) => f.planQueries.diff(p.planId, ctx.principal),
  planArtifacts: (f, p, ctx) => f.planQueries.artifacts(p.planId, ctx.principal),
  planPrompt: (f, p, ctx) => f.plans.prompt(p.planId, p.guidance, ctx.principal),
  planApprove: (f, p, ctx) => f.planAnswers.approve(p.planId, p, ctx.principal),
  planReject: (f, p, ctx) => f.planAnswers.reject(p.planId, p, ctx.principal),
  planRollback: (f, p, ctx) => f.plans.rollback(p, ctx.principal),
  planList: (f, p, ctx) => f.planQueries.list(p, ctx.principal),
});

/** The plan housekeeping family bound to the facade (its contracts, for clients too, are in contracts/plan-housekeeping.contract.ts). */
export const PLAN_HOUSEKEEPING_ROWS = bindFamily(h.PLAN_HOUSEKEEPING_METHODS, {
  planRebase: (f, p, ctx) => f.planHousekeeping.rebase(p.planId, p, ctx.principal),
  planDelete: (f, p, ctx) => f.planHousekeeping.delete(p.planId, p, ctx.principal),
  planPrune: (f, p, ctx) => f.planHousekeeping.prune(p, ctx.principal),
});

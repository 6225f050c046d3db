/**
 * The composition root of the services: each built once, in dependency order, from the stores and
 * adapters `buildApp` opened. Where a service needs a capability of one built later, it gets a
 * narrow port served by something built earlier (see each area's file), never a forward reference.
 */
import { AuditService } from '../../application/accounts/audit.service.ts';
import { QuotaService } from '../../application/accounts/quota.service.ts';
import type { ServiceFacade } from '../../application/service-facade.ts';
import { SessionDeletion } from '../../application/sessions/session-deletion.service.ts';
import { SyncService } from '../../application/sync/sync.service.ts';
import type { LiveTasks } from '../../application/tasks/live-tasks.service.ts';
import type { StrandedTasks } from '../../application/tasks/stranded-tasks.service.ts';
import type { TurnRunner } from '../../application/tasks/turn-runner.service.ts';
import { buildAccounts } from './accounts.wiring.ts';
import { buildContext } from './context.wiring.ts';
import { buildConversations } from './conversations.wiring.ts';
import { buildNamespaces, NamespaceWorkCleaner } from './namespaces.wiring.ts';
import { buildPlans } from './plans.wiring.ts';
import { buildPushConfigs, buildPushDelivery } from './push.wiring.ts';
import { buildRegistry } from './registry.wiring.ts';
import { NO_SYNC, type ServiceDeps } from './service-deps.ts';
import { buildHealth, buildRetention } from './system.wiring.ts';
import { buildTasks } from './tasks.wiring.ts';

export { NO_GRANTS, NO_SYNC, type LlmDeps, type ServiceDeps } from './service-deps.ts';

/** The services, and the task parts the process itself runs (recovery, a graceful stop). */
export interface Services {
  facade: ServiceFacade;
  /** Tasks held in memory here: a running turn or a subscriber. */
  live: LiveTasks;
  /** Running turns: a graceful stop drains them. */
  turns: TurnRunner;
  /** Tasks nothing runs any more: settled at start and from time to time. */
  stranded: StrandedTasks;
}

export function composeServices(deps: ServiceDeps): Services {
  const audit = new AuditService(deps.audit, deps.logger);
  const registryParts = buildRegistry(deps, audit);
  const { registry, capabilities, llm } = registryParts;
  const context = buildContext(deps, registry);
  // Before what starts turns (chat, plan phases, compaction): each asks it first.
  const quota = new QuotaService({
    defaults: deps.quota.defaults,
    usage: deps.quota.store,
    limits: deps.quota.store,
    namespaces: deps.namespaces,
    audit,
    mode: deps.quota.mode,
  });
  const conversations = buildConversations(deps, registryParts, context, quota);
  const { actors, sessions, turnHistory } = conversations;
  const push = buildPushDelivery(deps);
  const tasks = buildTasks({
    admission: quota,
    tasks: deps.tasks,
    sessions,
    actors,
    logger: deps.logger,
    limits: deps.limits,
    inlinePush: push.inline,
    observers: [push.observer],
    tracer: deps.tracer,
  });
  const planParts = buildPlans(deps, registryParts, context, tasks, audit, quota);
  const { engine, plans } = planParts;
  const sessionDeletion = new SessionDeletion({ sessions, tasks: tasks.service, turnHistory });
  const work = new NamespaceWorkCleaner({
    plans: deps.plans,
    sessions: deps.sessions,
    engine,
    housekeeping: planParts.planHousekeeping,
    sessionDeletion,
  });
  const namespaces = buildNamespaces(deps, audit, registry, work);
  const facade: ServiceFacade = {
    ...conversations,
    ...buildAccounts(deps, audit),
    tasks: tasks.service,
    push: buildPushConfigs(deps.pushConfigs, deps, tasks.service, push.notifier),
    notifier: push.notifier,
    health: buildHealth(deps, tasks.live, registry, llm),
    registry,
    namespaces,
    capabilities,
    plans,
    planQueries: planParts.planQueries,
    planAnswers: planParts.planAnswers,
    planCorrections: planParts.planCorrections,
    planHousekeeping: planParts.planHousekeeping,
    context,
    audit,
    sync: new SyncService({
      registry,
      namespaces,
      namespaceRepo: deps.namespaces,
      inspector: deps.inspector,
      logger: deps.logger,
      ...(deps.sync ?? NO_SYNC),
    }),
    secrets: deps.secrets,
    quota,
    retention: buildRetention(deps, tasks.live),
    deleteSession: (id, principal) => sessionDeletion.delete(id, principal),
  };
  return { facade, live: tasks.live, turns: tasks.turns, stranded: tasks.stranded };
}

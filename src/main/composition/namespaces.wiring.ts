import type { AuditService } from '../../application/accounts/audit.service.ts';
import type { PlanEngine } from '../../application/plans/plan-engine.service.ts';
import type { PlanHousekeeping } from '../../application/plans/plan-housekeeping.service.ts';
import type { PlanRepository } from '../../application/ports/plan.repository.port.ts';
import { systemPrincipalFor } from '../../application/ports/principal.ts';
import type { SessionRepository } from '../../application/ports/session.repository.port.ts';
import { NamespaceService, type NamespaceWork } from '../../application/registry/namespace.service.ts';
import type { RegistryService } from '../../application/registry/registry.service.ts';
import type { SessionDeletion } from '../../application/sessions/session-deletion.service.ts';
import type { ServiceDeps } from './service-deps.ts';

/** The namespace service: last of the registry's kin, since deleting a namespace clears its plans and sessions. */
export function buildNamespaces(
  deps: ServiceDeps,
  audit: AuditService,
  registry: RegistryService,
  work: NamespaceWork,
): NamespaceService {
  return new NamespaceService(deps.namespaces, deps.registry, () => registry.builtinCounts(), {
    users: deps.users,
    audit,
    work,
  });
}

/** A namespace's plans (with their sandboxes and branches) and sessions (with their tasks, running ones cancelled). */
export class NamespaceWorkCleaner implements NamespaceWork {
  private readonly deps: {
    plans: Pick<PlanRepository, 'list'>;
    sessions: Pick<SessionRepository, 'list'>;
    engine: Pick<PlanEngine, 'running'>;
    housekeeping: Pick<PlanHousekeeping, 'delete'>;
    sessionDeletion: Pick<SessionDeletion, 'delete'>;
  };

  constructor(deps: NamespaceWorkCleaner['deps']) {
    this.deps = deps;
  }

  async runningPlans(namespace: string): Promise<number> {
    const { plans, engine } = this.deps;
    return (await plans.list({ owner: namespace })).filter((p) => engine.running.has(p.id)).length;
  }

  async clear(namespace: string): Promise<void> {
    const principal = systemPrincipalFor(namespace);
    for (const p of await this.deps.plans.list({ owner: namespace }))
      await this.deps.housekeeping.delete(p.id, { force: true }, principal);
    const seen = new Set<string>();
    for (;;) {
      const page = await this.deps.sessions.list(namespace, 100);
      const fresh = page.sessions.filter((s) => !seen.has(s.id));
      if (fresh.length === 0) break;
      for (const session of fresh) {
        seen.add(session.id);
        await this.deps.sessionDeletion.delete(session.id, principal);
      }
    }
  }
}

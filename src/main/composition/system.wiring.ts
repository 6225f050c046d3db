import { actorChecks } from '../../application/actors/llm/actor-checks.ts';
import type { DiagnosticCheck } from '../../application/ports/system.port.ts';
import type { Principal } from '../../application/ports/principal.ts';
import type { RegistryService } from '../../application/registry/registry.service.ts';
import { HealthService } from '../../application/system/health.service.ts';
import { RetentionService } from '../../application/system/retention.service.ts';
import type { LiveTasks } from '../../application/tasks/live-tasks.service.ts';
import type { LlmDeps, ServiceDeps } from './service-deps.ts';

/** Health and diagnostics: the host probe, the tasks held in memory, and (with LLM actors) the actors' checks. */
export function buildHealth(
  deps: ServiceDeps,
  live: LiveTasks,
  registry: RegistryService,
  llm: LlmDeps | undefined,
): HealthService {
  const checks = llm && new ActorDiagnostics(registry, llm);
  return new HealthService(deps.probe, deps.version, () => live.size, checks && ((principal) => checks.of(principal)));
}

/** Retention sweeps never delete a task this process holds (a running turn or a subscriber). */
export function buildRetention(deps: ServiceDeps, live: LiveTasks): RetentionService {
  return new RetentionService({
    tasks: deps.tasks,
    sessions: deps.sessions,
    isLive: (id) => live.has(id),
    logger: deps.logger,
  });
}

/** What `agents health --diagnose` says of the caller's actors: their models and keys. */
class ActorDiagnostics {
  private readonly registry: RegistryService;
  private readonly llm: LlmDeps;

  constructor(registry: RegistryService, llm: LlmDeps) {
    this.registry = registry;
    this.llm = llm;
  }

  async of(principal: Principal): Promise<DiagnosticCheck[]> {
    const page = await this.registry.list('actor', { pageSize: 500 }, principal);
    return actorChecks(
      page.items.map((e) => ({ name: e.name, definition: e.definition })),
      this.llm.models,
      this.llm.keys,
    );
  }
}

import {
  BUILTIN_ACTIONS,
  BUILTIN_ACTOR_DEFINITIONS,
  BUILTIN_AUTOMATION_PROFILES,
  BUILTIN_TOOLS,
} from '../../domain/registry/builtins.ts';
import type { HookDefinition } from '../../domain/registry/entities.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import { grantedModels } from '../../application/actors/llm/granted-models.ts';
import type { AuditService } from '../../application/accounts/audit.service.ts';
import { UsageMeter } from '../../application/accounts/usage-meter.ts';
import { HookService, type HookServiceDeps } from '../../application/hooks/hook.service.ts';
import type { HookRunner } from '../../application/ports/hook-runner.port.ts';
import type { LanguageModels } from '../../application/ports/language-model.port.ts';
import type { Logger } from '../../application/ports/logger.port.ts';
import { isOfKind, type RegistryRepository } from '../../application/ports/registry.repository.port.ts';
import { CapabilityService } from '../../application/registry/capability.service.ts';
import { NamespaceAccess } from '../../application/registry/namespace-access.service.ts';
import { RegistryService } from '../../application/registry/registry.service.ts';
import { NO_GRANTS, type LlmDeps, type ServiceDeps } from './service-deps.ts';

/** What the registry area gives the services built after it. */
export interface RegistryParts {
  capabilities: CapabilityService;
  registry: RegistryService;
  /** Absent without a hook runner: registered hooks do not run. */
  hooks: HookService | undefined;
  /** The LLM deps with every model request going out as its actor's namespace's grants allow. */
  llm: LlmDeps | undefined;
}

/** The capability service (unless the root made one already), the registry, and the hooks. */
export function buildRegistry(deps: ServiceDeps, audit: AuditService): RegistryParts {
  const capabilities =
    deps.capabilities ??
    new CapabilityService({
      grants: deps.grants ?? NO_GRANTS,
      inspector: deps.inspector,
      settings: deps.trust ?? { mode: 'local' },
      egress: deps.trust?.mode === 'server' ? deps.egress : undefined,
      namespaceExists: async (name) => (await deps.namespaces.get(name)) !== undefined,
      audit,
    });
  const llm = deps.llm && { ...deps.llm, models: meteredOnServer(deps, grantedModels(deps.llm.models, capabilities)) };
  // The registry needs only what the principal's roles allow (NamespaceAccess): the namespace
  // service, whose deletion clears plans and sessions, comes after them.
  const registry = new RegistryService({
    repo: deps.registry,
    namespaces: new NamespaceAccess(),
    capabilities,
    inspector: deps.inspector,
    builtins: {
      actor: BUILTIN_ACTOR_DEFINITIONS,
      tool: BUILTIN_TOOLS,
      action: BUILTIN_ACTIONS,
      'automation-profile': BUILTIN_AUTOMATION_PROFILES,
    },
    builtinModels: [...deps.actorsByModel.keys()],
    llm: deps.llm && { keys: deps.llm.keys, mcp: deps.llm.mcp },
    audit,
  });
  const hooks = deps.hookRunner
    ? new HookService(new RegistryHookSources(deps.registry, capabilities, deps.hookRunner, deps.logger))
    : undefined;
  return { capabilities, registry, hooks, llm };
}

/**
 * On a server every model step's tokens are recorded for its user's tokens per day; the local
 * user is never limited, so nothing is written there.
 */
function meteredOnServer(deps: ServiceDeps, models: LanguageModels): LanguageModels {
  if (deps.quota.mode !== 'server') return models;
  return new UsageMeter({ ledger: deps.quota.store, logger: deps.logger }).models(models);
}

/**
 * What the hook service reads of the registry: a namespace's hooks, a project's network setting,
 * and what the hook's namespace was granted (private network; whether the hook may be used).
 */
export class RegistryHookSources implements HookServiceDeps {
  readonly runner: HookRunner;
  readonly logger: Logger;
  private readonly repo: RegistryRepository;
  private readonly capabilities: CapabilityService;

  constructor(repo: RegistryRepository, capabilities: CapabilityService, runner: HookRunner, logger: Logger) {
    this.repo = repo;
    this.capabilities = capabilities;
    this.runner = runner;
    this.logger = logger;
  }

  async hooksOf(namespace: string): Promise<HookDefinition[]> {
    return (await this.repo.list({ kind: 'hook', namespaces: [namespace] }))
      .filter((e) => isOfKind(e, 'hook'))
      .map((e) => e.definition);
  }

  async projectNetwork(name: string): Promise<'none' | 'allow' | undefined> {
    const project = await this.repo.get('project', name);
    return project && isOfKind(project, 'project') ? project.definition.settings?.network : undefined;
  }

  privateNetwork(hook: HookDefinition): Promise<boolean> {
    return this.capabilities.holds(namespaceOf(hook.name), 'private-network');
  }

  /** Why the hook may not be used now (its namespace lost a capability), or undefined. */
  refusal(hook: HookDefinition): Promise<string | undefined> {
    return this.capabilities
      .assertUsable({ kind: 'hook', name: hook.name, namespace: namespaceOf(hook.name), definition: hook })
      .then(
        () => undefined,
        (err: Error) => err.message,
      );
  }
}

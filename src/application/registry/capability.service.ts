/**
 * What a namespace's definitions may make the server do (issue #35). Local mode: the local user
 * holds every capability — it is their machine. Server mode: a namespace holds what a server
 * administrator granted it (`agents namespace grant`); `local/` (the administrator's own) and
 * `builtin/` hold everything. Checked when a definition is declared (add, update, sync push) and
 * again when it is used, so a revoked grant or a definition older than the rule stops working.
 */
import type { LocalResource } from '../../domain/registry/resource.definition.ts';
import path from 'node:path';
import { AppError, type FieldViolation } from '../../domain/errors.ts';
import {
  CAPABILITIES,
  CAPABILITY_MEANING,
  capabilityNeeds,
  fieldName,
  type Capability,
  type CapabilityNeed,
} from '../../domain/registry/capabilities.ts';
import type { Definition, RegistryEntity, RegistryKind } from '../../domain/registry/entities.ts';
import { BUILTIN_NAMESPACE, DEFAULT_NAMESPACE } from '../../domain/registry/names.ts';
import type { AuditEntry } from '../accounts/audit.service.ts';
import type { EgressPolicy } from '../ports/egress.port.ts';
import type { CapabilityGrant, GrantRepository } from '../ports/grant.repository.port.ts';
import { roleIn, type Principal } from '../ports/principal.ts';
import type { PathScope, ResolvedPath, ResourceInspector } from '../ports/registry.repository.port.ts';
import { namespaceNotFound } from './namespace.service.ts';

export interface TrustSettings {
  mode: 'local' | 'server';
  /** Server mode: each namespace's workspace is `<workspaceRoot>/<namespace>` (absolute). */
  workspaceRoot?: string | undefined;
  /** Server mode: the server's own directories (its data directory), named by a label in what members read. */
  hiddenPaths?: ReadonlyArray<{ path: string; label: string }> | undefined;
}

export interface CapabilityServiceDeps {
  grants: GrantRepository;
  inspector: ResourceInspector;
  settings: TrustSettings;
  /** Server mode: whether a URL reaches a refused address (absent: every URL may be reached). */
  egress?: EgressPolicy | undefined;
  /** Whether a namespace exists (a grant needs one). */
  namespaceExists(name: string): Promise<boolean>;
  audit?: { record(entry: AuditEntry): Promise<void> } | undefined;
  now?: () => Date;
}

/** A field a definition may not have (yet): its place, and the refusal's sentence. */
export interface CapabilityProblem {
  path: (string | number)[];
  capability: Capability;
  description: string;
}

/** Namespaces that hold every capability on any server: the administrator's own and the shipped one. */
const TRUSTED = new Set([DEFAULT_NAMESPACE, BUILTIN_NAMESPACE]);

export class CapabilityService {
  private readonly now: () => Date;

  private readonly deps: CapabilityServiceDeps;

  constructor(deps: CapabilityServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  get mode(): 'local' | 'server' {
    return this.deps.settings.mode;
  }

  /** The namespace's workspace directory (server mode), or undefined. */
  workspaceOf(namespace: string): string | undefined {
    const root = this.deps.settings.workspaceRoot;
    return this.mode === 'server' && root ? path.join(root, namespace) : undefined;
  }

  /** Whether the namespace holds the capability (for host-path: anywhere, or within some paths). */
  async grantOf(namespace: string, capability: Capability): Promise<'any' | readonly string[] | undefined> {
    if (this.mode === 'local' || TRUSTED.has(namespace)) return 'any';
    const g = (await this.deps.grants.list(namespace)).find((x) => x.capability === capability);
    return g ? (g.paths ?? 'any') : undefined;
  }

  /**
   * Text for a namespace's users without the server's directories: the workspace root and the data
   * directory appear by their labels (`<workspaces>`, `<data dir>`). Local mode, and a namespace
   * that may name any host path, read it as it is.
   */
  async redact(text: string, namespace: string): Promise<string> {
    if (this.mode === 'local' || (await this.grantOf(namespace, 'host-path')) === 'any') return text;
    return this.hide(text);
  }

  /** An error's text as the principal may read it: a server's non-administrators never see its directories. */
  redactFor(text: string, principal: Pick<Principal, 'admin'> | undefined): string {
    return this.mode === 'local' || principal === undefined || principal.admin ? text : this.hide(text);
  }

  private hide(text: string): string {
    const { workspaceRoot, hiddenPaths = [] } = this.deps.settings;
    const hidden = [...(workspaceRoot ? [{ path: workspaceRoot, label: '<workspaces>' }] : []), ...hiddenPaths];
    // Longest first: the workspace root usually lies inside the data directory.
    return hidden
      .sort((a, b) => b.path.length - a.path.length)
      .reduce((out, h) => out.split(h.path).join(h.label), text);
  }

  /** Whether the namespace of an entity name (bare: local/) may name any host path. */
  async anyHostPath(entityName: string): Promise<boolean> {
    if (this.mode === 'local') return true;
    const slash = entityName.indexOf('/');
    return (await this.grantOf(slash < 0 ? DEFAULT_NAMESPACE : entityName.slice(0, slash), 'host-path')) === 'any';
  }

  async holds(namespace: string, capability: Capability): Promise<boolean> {
    return (await this.grantOf(namespace, capability)) !== undefined;
  }

  /** The namespace's grants; a member sees their own namespace's, an administrator any. */
  async list(
    namespace: string,
    principal: Principal,
  ): Promise<{ namespace: string; mode: 'local' | 'server'; grants: CapabilityGrant[] }> {
    if (
      (!principal.admin && roleIn(principal, namespace) === undefined) ||
      (namespace !== BUILTIN_NAMESPACE && !(await this.deps.namespaceExists(namespace)))
    )
      throw namespaceNotFound(namespace);
    if (this.mode === 'local' || TRUSTED.has(namespace)) {
      const at = '2026-01-01T00:00:00.000Z';
      const by = this.mode === 'local' ? 'local mode' : 'the server';
      return {
        namespace,
        mode: this.mode,
        grants: CAPABILITIES.map((capability) => ({ namespace, capability, grantedBy: by, grantedAt: at })),
      };
    }
    return { namespace, mode: this.mode, grants: await this.deps.grants.list(namespace) };
  }

  /** Grants a capability to a namespace (server administrators only; audited). */
  async grant(
    namespace: string,
    capability: Capability,
    paths: readonly string[] | undefined,
    principal: Principal,
  ): Promise<CapabilityGrant> {
    this.assertAdministrator(principal, 'grant');
    if (paths !== undefined && capability !== 'host-path')
      throw new AppError('INVALID_PARAMS', `--paths applies to host-path only, not ${capability}`, {
        fields: [{ field: 'paths', description: 'only with capability host-path' }],
      });
    const bad = paths?.find((p) => !path.isAbsolute(p) || p.includes('\0'));
    if (bad !== undefined)
      throw new AppError('INVALID_PARAMS', `${JSON.stringify(bad)} is not an absolute path`, {
        fields: [{ field: 'paths', description: 'absolute host directories' }],
      });
    if (!(await this.deps.namespaceExists(namespace))) throw namespaceNotFound(namespace);
    const grant: CapabilityGrant = {
      namespace,
      capability,
      ...(paths && paths.length > 0 ? { paths: [...new Set(paths.map((p) => path.resolve(p)))] } : {}),
      grantedBy: principal.id,
      grantedAt: this.now().toISOString(),
    };
    if (!(await this.deps.grants.put(grant))) throw namespaceNotFound(namespace);
    await this.audit(principal, 'capability.granted', namespace, capability, grant.paths ? { paths: grant.paths } : {});
    return grant;
  }

  /** Takes a grant back; definitions that need it stop working at their next use. */
  async revoke(
    namespace: string,
    capability: Capability,
    principal: Principal,
  ): Promise<{ namespace: string; capability: Capability; revoked: boolean }> {
    this.assertAdministrator(principal, 'revoke');
    if (!(await this.deps.namespaceExists(namespace))) throw namespaceNotFound(namespace);
    const revoked = await this.deps.grants.remove(namespace, capability);
    if (revoked) await this.audit(principal, 'capability.revoked', namespace, capability, {});
    return { namespace, capability, revoked };
  }

  /**
   * The fields of a definition its namespace may not declare. A resource's path comes back
   * resolved (`resourcePath`) when it may be declared. Refusals are recorded in the audit log.
   */
  async declarationProblems(
    kind: RegistryKind,
    definition: Definition,
    namespace: string,
    principal: Principal,
  ): Promise<{ problems: CapabilityProblem[]; resourcePath?: ResolvedPath; pathProblem?: string }> {
    const problems: CapabilityProblem[] = [];
    let resourcePath: ResolvedPath | undefined;
    let pathProblem: string | undefined;
    for (const need of capabilityNeeds(kind, definition)) {
      if (kind === 'resource' && need.when === 'path') {
        // Not a capability refusal: a path not allowed reads exactly as one that does not exist.
        resourcePath = await this.resolvePath(namespace, need.target);
        if (!resourcePath) pathProblem = await this.pathRefusal(need.target, namespace);
        continue;
      }
      const problem = await this.unmet(need, namespace);
      if (problem) problems.push({ path: need.path, capability: need.capability, description: problem });
    }
    if (problems.length > 0)
      await this.audit(
        principal,
        'capability.refused',
        namespace,
        `${kind} ${definition.name}`,
        {
          fields: problems.map((p) => ({ field: fieldName(p.path), capability: p.capability })),
        },
        'refused',
      );
    return { problems, ...(resourcePath ? { resourcePath } : {}), ...(pathProblem ? { pathProblem } : {}) };
  }

  /**
   * Refuses a definition that needs what its namespace no longer holds (checked at each use: a
   * grant may have been taken back, or the definition may predate the rule).
   */
  async assertUsable(entity: Pick<RegistryEntity, 'kind' | 'name' | 'namespace' | 'definition'>): Promise<void> {
    if (this.mode === 'local' || TRUSTED.has(entity.namespace)) return;
    for (const need of capabilityNeeds(entity.kind, entity.definition)) {
      if (entity.kind === 'resource') continue; // resourceRoot resolves and checks it
      const problem = await this.unmet(need, entity.namespace);
      if (problem)
        throw new AppError(
          'FORBIDDEN',
          `${entity.kind} ${entity.name} cannot be used: ${fieldName(need.path)}: ${problem}`,
          {
            details: {
              entity: entity.kind,
              name: entity.name,
              field: fieldName(need.path),
              capability: need.capability,
            },
            hint: grantHint(entity.namespace, need.capability),
          },
        );
    }
  }

  /** The real directory of a resource, checked as at declaration (its workspace, its grant). */
  async resourceRoot(entity: { name: string; namespace: string; definition: LocalResource }): Promise<string> {
    const given = entity.definition.path;
    if (this.mode === 'local' && path.isAbsolute(given)) return given;
    const resolved = await this.resolvePath(entity.namespace, given);
    if (!resolved)
      throw new AppError('NOT_FOUND', `Resource ${entity.name}: ${await this.pathRefusal(given, entity.namespace)}`, {
        details: { entity: 'resource', name: entity.name },
        hint: `register it again with a directory in the workspace (agents resource update ${entity.name} --config FILE)`,
      });
    return resolved.real;
  }

  /** `given` resolved for the namespace: within its workspace, or where its host-path grant reaches. */
  private async resolvePath(namespace: string, given: string): Promise<ResolvedPath | undefined> {
    const granted = await this.grantOf(namespace, 'host-path');
    const scope: PathScope = { workspace: this.workspaceOf(namespace), granted };
    if (this.mode === 'local' && !path.isAbsolute(given)) return undefined;
    return this.deps.inspector.resolve(given, scope);
  }

  /**
   * Why a path cannot be a resource's: on a server one sentence for a path not allowed and one that
   * does not exist alike; in local mode (the user's own machine), and to a namespace that may name
   * any host path, the specific reason.
   */
  private async pathRefusal(given: string, namespace: string): Promise<string> {
    const inWorkspace = `${given} is not a directory in namespace ${namespace}'s workspace`;
    if (!path.isAbsolute(given)) return this.mode === 'local' ? `${given} must be an absolute path` : inWorkspace;
    // Only a namespace that may name any host path learns why a host path is refused.
    if ((await this.grantOf(namespace, 'host-path')) !== 'any') return inWorkspace;
    const facts = await this.deps.inspector.inspect(given);
    if (!facts.exists) return `${given} does not exist`;
    if (!facts.isDirectory) return `${given} is not a directory`;
    return `${given} is inside a .git directory: register the work tree above it`;
  }

  /** What to do about a resource path a namespace may not name (undefined in local mode). */
  pathHint(namespace: string): string | undefined {
    if (this.mode === 'local') return undefined;
    return `on a server a resource is a directory in its namespace's workspace, named relative to it (e.g. --path app); an administrator puts repositories there, or grants other directories with \`agents namespace grant ${namespace} host-path --paths DIR\``;
  }

  /** Why the namespace may not have the field (undefined: it may). */
  private async unmet(need: CapabilityNeed, namespace: string): Promise<string | undefined> {
    if (await this.holds(namespace, need.capability)) return undefined;
    if (need.when === 'url') {
      const reason = await this.deps.egress?.refusal(need.target, need.schemes);
      if (reason === undefined) return undefined;
      return `${reason}; namespace ${namespace} does not hold the private-network capability (${grantHint(namespace, 'private-network')})`;
    }
    return `${CAPABILITY_MEANING[need.capability]} (${need.target}): namespace ${namespace} does not hold the ${need.capability} capability; ${grantHint(namespace, need.capability)}`;
  }

  private assertAdministrator(principal: Principal, what: string): void {
    if (this.mode === 'local')
      throw new AppError('UNSUPPORTED_OPERATION', `Capabilities are granted on a server: local mode holds every one`, {
        hint: 'run `agents serve` for your team and grant them there (agents --server <url> namespace grant …)',
      });
    if (!principal.admin)
      throw new AppError('FORBIDDEN', `Only a server administrator may ${what} capabilities`, {
        hint: 'ask a server administrator (see `agents whoami`)',
      });
  }

  private audit(
    by: Principal,
    event: 'capability.granted' | 'capability.revoked' | 'capability.refused',
    namespace: string,
    target: string,
    details: Record<string, unknown>,
    outcome: 'ok' | 'refused' = 'ok',
  ): Promise<void> {
    return this.deps.audit?.record({ event, by, namespace, target, outcome, details }) ?? Promise.resolve();
  }
}

/** Who can grant it, as a command. */
export function grantHint(namespace: string, capability: Capability): string {
  return `a server administrator can grant it with \`agents namespace grant ${namespace} ${capability}\``;
}

/** The problems as located field violations (file and line come from the definition's source). */
export function capabilityViolations(
  problems: readonly CapabilityProblem[],
  at: (p: ReadonlyArray<PropertyKey>, m: string) => FieldViolation,
): FieldViolation[] {
  return problems.map((p) => at(p.path, p.description));
}

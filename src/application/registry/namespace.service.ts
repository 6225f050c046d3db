import { AppError } from '../../domain/errors.js';
import { BUILTIN_NAMESPACE } from '../../domain/registry/names.js';
import { LOCAL_PRINCIPAL, type Principal } from '../ports/principal.js';
import type { Member, NamespaceRepository, RegistryRepository, Role } from '../ports/registry.repository.port.js';
import type { RegistryKind } from '../../domain/registry/entities.js';

const WRITE_ROLES: ReadonlySet<Role> = new Set(['owner', 'admin', 'member']);

export interface NamespaceSummary {
  name: string;
  owner: string;
  role: Role;
  createdAt: string;
  builtin: boolean;
}

export interface NamespaceDetail extends NamespaceSummary {
  memberCount: number;
  entities: Partial<Record<RegistryKind, number>>;
}

/**
 * Namespaces and their members (owner, admin, member, viewer). Everyone may read `builtin`; a
 * namespace the caller is not a member of is indistinguishable from one that does not exist.
 */
export class NamespaceService {
  constructor(
    private readonly repo: NamespaceRepository,
    private readonly registry: RegistryRepository,
    private readonly builtinCounts: () => Partial<Record<RegistryKind, number>>,
  ) {}

  /**
   * The local user as the store knows them: `local/` and every namespace they were made a member
   * of here (e.g. the namespaces sync brought from a server). Asked per request, so a change shows
   * at once.
   */
  async localPrincipal(): Promise<Principal> {
    const roles: Record<string, Role> = {};
    for (const n of await this.repo.forPrincipal(LOCAL_PRINCIPAL.id)) roles[n.name] = n.role;
    return { ...LOCAL_PRINCIPAL, roles: { ...roles, ...LOCAL_PRINCIPAL.roles } };
  }

  /** Namespaces whose entities the principal may read. */
  readable(principal: Principal): Promise<string[]> {
    return Promise.resolve([...Object.keys(principal.roles), BUILTIN_NAMESPACE]);
  }

  /** Refuses unless the principal may write entities in the namespace. */
  assertWritable(namespace: string, principal: Principal): Promise<void> {
    try {
      this.checkWritable(namespace, principal);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private checkWritable(namespace: string, principal: Principal): void {
    if (namespace === BUILTIN_NAMESPACE) {
      throw new AppError('FORBIDDEN', 'builtin/ entities ship with CleverAgents and cannot be changed', {
        hint: 'use your own namespace, e.g. local/',
      });
    }
    const role = principal.roles[namespace];
    if (!role || !WRITE_ROLES.has(role)) {
      throw new AppError('FORBIDDEN', `You may not write to namespace ${namespace}`, {
        details: { namespace, role: role ?? null },
        hint: 'see your namespaces with `agents namespace list`',
      });
    }
  }

  async list(principal: Principal): Promise<{ namespaces: NamespaceSummary[] }> {
    const mine = await this.repo.forPrincipal(principal.id);
    return {
      namespaces: [
        ...mine.map((n) => ({ name: n.name, owner: n.owner, role: n.role, createdAt: n.createdAt, builtin: false })),
        builtinNamespace(),
      ],
    };
  }

  async show(name: string, principal: Principal): Promise<NamespaceDetail> {
    if (name === BUILTIN_NAMESPACE) return { ...builtinNamespace(), memberCount: 0, entities: this.builtinCounts() };
    const role = await this.repo.roleOf(name, principal.id);
    const ns = role && (await this.repo.get(name));
    if (!role || !ns) throw notFound(name);
    return {
      name: ns.name,
      owner: ns.owner,
      role,
      createdAt: ns.createdAt,
      builtin: false,
      memberCount: (await this.repo.members(name)).length,
      entities: await this.registry.countByNamespace(name),
    };
  }

  async members(name: string, principal: Principal): Promise<{ namespace: string; members: Member[] }> {
    if (name === BUILTIN_NAMESPACE) return { namespace: name, members: [] };
    const role = await this.repo.roleOf(name, principal.id);
    if (!role) throw notFound(name);
    return { namespace: name, members: await this.repo.members(name) };
  }
}

function builtinNamespace(): NamespaceSummary {
  return {
    name: BUILTIN_NAMESPACE,
    owner: 'system',
    role: 'viewer',
    createdAt: '2026-01-01T00:00:00.000Z',
    builtin: true,
  };
}

function notFound(name: string): AppError {
  return new AppError('NOT_FOUND', `Namespace ${name} was not found`, {
    details: { entity: 'namespace', name },
    hint: 'see your namespaces with `agents namespace list`',
  });
}

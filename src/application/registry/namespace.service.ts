import { AppError } from '../../domain/errors.ts';
import { mayAssign } from '../../domain/permissions.ts';
import { BUILTIN_NAMESPACE } from '../../domain/registry/names.ts';
import type { AuditEntry } from '../accounts/audit.service.ts';
import { LOCAL_PRINCIPAL, roleIn, type Principal } from '../ports/principal.ts';
import { NamespaceAccess } from './namespace-access.service.ts';
import type {
  Member,
  NamespaceContents,
  NamespaceRecord,
  NamespaceRepository,
  RegistryRepository,
  Role,
} from '../ports/registry.repository.port.ts';
import type { RegistryKind } from '../../domain/registry/entities.ts';

/** Names no one may create: they mean something to CleverAgents (or would mislead). */
export const RESERVED_NAMESPACES: readonly string[] = [
  BUILTIN_NAMESPACE,
  'local',
  'system',
  'internal',
  'admin',
  'root',
];

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

export interface NamespaceDeletion {
  name: string;
  deleted: true;
  /** What went with it (all zero unless forced). */
  removed: NamespaceContents;
}

export interface MembershipChange {
  namespace: string;
  user: string;
  /** The user's role now (absent: no longer a member). */
  role?: Role;
  /** The user's role before (absent: was not a member). */
  previous?: Role;
}

/** The accounts the server knows (server mode); absent in local mode, which has only the local user. */
export interface UserDirectory {
  exists(name: string): Promise<boolean>;
}

/** What lives in a namespace besides its rows: running plans, sandboxes, live tasks. */
export interface NamespaceWork {
  /** How many of the namespace's plans are running now. */
  runningPlans(namespace: string): Promise<number>;
  /** Deletes its plans (with their sandboxes and branches) and its sessions (their running tasks cancelled). */
  clear(namespace: string): Promise<void>;
}

export interface NamespaceServiceOptions {
  /** Server mode: the accounts members are chosen from. Absent (local mode), members cannot be added. */
  users?: UserDirectory | undefined;
  /** Where membership and namespace changes are recorded. */
  audit?: { record(entry: AuditEntry): Promise<void> } | undefined;
  /** Plans and sessions of a namespace being deleted (absent: only the stored rows are deleted). */
  work?: NamespaceWork | undefined;
  now?: () => Date;
}

/**
 * Namespaces and their members (owner, admin, member, viewer). Everyone may read `builtin`; a
 * namespace the caller is not a member of is indistinguishable from one that does not exist.
 * Which namespaces are the caller's comes from the principal's roles (memberships, or a JWT's
 * roles claim); the store says who owns one and since when.
 */
export class NamespaceService extends NamespaceAccess {
  private readonly now: () => Date;

  /** The local user's principal, and the store version it was read at. */
  private local: { version: number; principal: Principal } | undefined;

  private readonly repo: NamespaceRepository;
  private readonly registry: RegistryRepository;
  private readonly builtinCounts: () => Partial<Record<RegistryKind, number>>;
  private readonly opts: NamespaceServiceOptions;

  constructor(
    repo: NamespaceRepository,
    registry: RegistryRepository,
    builtinCounts: () => Partial<Record<RegistryKind, number>>,
    opts: NamespaceServiceOptions = {},
  ) {
    super();
    this.repo = repo;
    this.registry = registry;
    this.builtinCounts = builtinCounts;
    this.opts = opts;
    this.now = opts.now ?? (() => new Date());
  }

  /**
   * The local user as the store knows them: `local/` and every namespace they were made a member
   * of here (e.g. the namespaces sync brought from a server). Asked per request, so a change shows
   * at once.
   */
  async localPrincipal(): Promise<Principal> {
    // Kept while the store's version stays (read first: a change during the read is seen next time).
    const version = this.repo.version?.();
    const known = this.local;
    if (known && version !== undefined && known.version === version) return known.principal;
    const roles: Record<string, Role> = {};
    for (const n of await this.repo.forPrincipal(LOCAL_PRINCIPAL.id)) roles[n.name] = n.role;
    // Frozen: every request shares it.
    const principal: Principal = Object.freeze({
      ...LOCAL_PRINCIPAL,
      roles: Object.freeze({ ...roles, ...LOCAL_PRINCIPAL.roles }),
    });
    if (version !== undefined) this.local = { version, principal };
    return principal;
  }

  async list(principal: Principal): Promise<{ namespaces: NamespaceSummary[] }> {
    const namespaces: NamespaceSummary[] = [];
    for (const [name, role] of Object.entries(principal.roles).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (name === BUILTIN_NAMESPACE) continue;
      const ns = await this.repo.get(name);
      if (ns) namespaces.push({ name, owner: ns.owner, role, createdAt: ns.createdAt, builtin: false });
    }
    return { namespaces: [...namespaces, builtinNamespace()] };
  }

  async show(name: string, principal: Principal): Promise<NamespaceDetail> {
    if (name === BUILTIN_NAMESPACE) return { ...builtinNamespace(), memberCount: 0, entities: this.builtinCounts() };
    const { role, ns } = await this.mine(name, principal);
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
    await this.mine(name, principal);
    return { namespace: name, members: await this.repo.members(name) };
  }

  /** Creates a namespace; the caller becomes its owner. */
  async create(name: string, principal: Principal): Promise<NamespaceSummary> {
    if (RESERVED_NAMESPACES.includes(name)) {
      throw new AppError('INVALID_PARAMS', `Namespace ${name} is reserved`, {
        fields: [{ field: 'name', description: `is reserved (${RESERVED_NAMESPACES.join(', ')})` }],
        hint: 'choose another name',
      });
    }
    const at = this.now().toISOString();
    if (!(await this.repo.create(name, principal.id, at))) {
      throw new AppError('ALREADY_EXISTS', `Namespace ${name} already exists`, {
        details: { entity: 'namespace', name },
        hint: 'choose another name (see yours with `agents namespace list`)',
      });
    }
    await this.audit(principal, 'namespace.created', name, name, { owner: principal.id });
    return { name, owner: principal.id, role: 'owner', createdAt: at, builtin: false };
  }

  /**
   * Deletes a namespace the caller owns. One that holds anything is refused unless forced, which
   * deletes its registry entities, sessions with their tasks, and plans; one with a running plan,
   * `local` and a user's default namespace never are.
   */
  async delete(name: string, opts: { force?: boolean | undefined }, principal: Principal): Promise<NamespaceDeletion> {
    if (name === BUILTIN_NAMESPACE || name === 'local') {
      throw new AppError('FORBIDDEN', `Namespace ${name} cannot be deleted`, {
        details: { namespace: name },
        hint: name === 'local' ? 'local/ is where the local user works; delete its entities instead' : undefined,
      });
    }
    const { role } = await this.mine(name, principal);
    if (role !== 'owner') {
      throw new AppError('FORBIDDEN', `Only an owner may delete namespace ${name}; your role there is ${role}`, {
        details: { namespace: name, role },
        hint: 'ask an owner of the namespace',
      });
    }
    const defaults = [
      ...new Set([
        ...(principal.defaultNamespace === name ? [principal.id] : []),
        ...(await this.repo.defaultFor(name)),
      ]),
    ];
    if (defaults.length > 0) {
      throw new AppError('FORBIDDEN', `Namespace ${name} is the default namespace of ${defaults.join(', ')}`, {
        details: { namespace: name, users: defaults },
        hint: "a user's own namespace goes only with the user",
      });
    }
    const running = (await this.opts.work?.runningPlans(name)) ?? 0;
    if (running > 0) {
      throw new AppError('INVALID_STATE', `Namespace ${name} has ${count(running, 'running plan')}`, {
        details: { namespace: name, runningPlans: running },
        hint: 'wait for them, or cancel them with `agents plan cancel <planId>`, then delete the namespace',
      });
    }
    const held = await this.repo.contents(name);
    const total = held.entities + held.sessions + held.tasks + held.plans;
    if (total > 0 && !opts.force) {
      throw new AppError('IN_USE', `Namespace ${name} is not empty: it holds ${describeContents(held)}`, {
        details: { namespace: name, ...held },
        hint: `delete them first, or pass --force to delete them with the namespace`,
      });
    }
    if (total > 0) await this.opts.work?.clear(name);
    await this.repo.purge(name);
    await this.audit(principal, 'namespace.deleted', name, name, { force: opts.force ?? false, removed: held });
    return { name, deleted: true, removed: held };
  }

  /** Adds a user to a namespace with a role (owner, admin: only an owner hands out owner). */
  async addMember(namespace: string, user: string, role: Role, principal: Principal): Promise<MembershipChange> {
    const users = this.usersOrRefuse();
    const by = await this.managing(namespace, principal);
    this.assertMayAssign(by, role, namespace);
    if (!(await users.exists(user))) {
      throw new AppError('NOT_FOUND', `User ${user} was not found`, {
        details: { entity: 'user', name: user },
        hint: 'a server administrator creates users (`agents user add`)',
      });
    }
    const previous = await this.repo.roleOf(namespace, user);
    if (previous) {
      throw new AppError('ALREADY_EXISTS', `${user} is already a member of ${namespace} (role ${previous})`, {
        details: { namespace, user, role: previous },
        hint: `change the role with \`agents namespace set-role ${namespace} ${user} <role>\``,
      });
    }
    await this.repo.setMember(namespace, user, role, this.now().toISOString());
    await this.audit(principal, 'member.added', namespace, user, { role });
    return { namespace, user, role };
  }

  /** Takes a user out of a namespace (never its last owner). */
  async removeMember(namespace: string, user: string, principal: Principal): Promise<MembershipChange> {
    const by = await this.managing(namespace, principal);
    const previous = await this.memberRole(namespace, user);
    this.assertMayAssign(by, previous, namespace);
    await this.assertNotLastOwner(namespace, user, previous, 'removed');
    await this.repo.removeMember(namespace, user);
    await this.audit(principal, 'member.removed', namespace, user, { role: null, previous });
    return { namespace, user, previous };
  }

  /** Changes a member's role (never demoting the last owner). */
  async setRole(namespace: string, user: string, role: Role, principal: Principal): Promise<MembershipChange> {
    const by = await this.managing(namespace, principal);
    const previous = await this.memberRole(namespace, user);
    this.assertMayAssign(by, previous, namespace);
    this.assertMayAssign(by, role, namespace);
    if (previous === role) return { namespace, user, role, previous };
    if (role !== 'owner') await this.assertNotLastOwner(namespace, user, previous, 'demoted');
    await this.repo.setMember(namespace, user, role, this.now().toISOString());
    await this.audit(principal, 'member.role-changed', namespace, user, { role, previous });
    return { namespace, user, role, previous };
  }

  /** The caller's role in one of their namespaces, and its row; missing and foreign look alike. */
  private async mine(name: string, principal: Principal): Promise<{ role: Role; ns: NamespaceRecord }> {
    const role = roleIn(principal, name);
    const ns = role && (await this.repo.get(name));
    if (!role || !ns) throw namespaceNotFound(name);
    return { role, ns };
  }

  /** The caller's role in a namespace whose members they manage (owner or admin). */
  private async managing(namespace: string, principal: Principal): Promise<Role> {
    if (namespace === BUILTIN_NAMESPACE) {
      throw new AppError('FORBIDDEN', 'builtin/ has no members: everyone reads it and no one changes it', {
        details: { namespace },
      });
    }
    const { role } = await this.mine(namespace, principal);
    if (role !== 'owner' && role !== 'admin') {
      throw new AppError('FORBIDDEN', `You may not manage the members of ${namespace}: your role there is ${role}`, {
        details: { namespace, role },
        hint: 'ask an owner or admin of the namespace',
      });
    }
    return role;
  }

  private assertMayAssign(by: Role, role: Role, namespace: string): void {
    if (!mayAssign(by, role)) {
      throw new AppError('FORBIDDEN', `Only an owner of ${namespace} may grant or take away the owner role`, {
        details: { namespace, role: by, target: role },
        hint: 'ask an owner of the namespace',
      });
    }
  }

  private async memberRole(namespace: string, user: string): Promise<Role> {
    const role = await this.repo.roleOf(namespace, user);
    if (!role) {
      throw new AppError('NOT_FOUND', `${user} is not a member of ${namespace}`, {
        details: { entity: 'member', namespace, name: user },
        hint: `see its members with \`agents namespace members ${namespace}\``,
      });
    }
    return role;
  }

  private async assertNotLastOwner(namespace: string, user: string, role: Role, what: string): Promise<void> {
    if (role !== 'owner') return;
    const owners = (await this.repo.members(namespace)).filter((m) => m.role === 'owner');
    if (owners.length <= 1 && owners.every((m) => m.principal === user)) {
      throw new AppError('INVALID_STATE', `${user} is the last owner of ${namespace} and cannot be ${what}`, {
        details: { namespace, user },
        hint: `make another member owner first (\`agents namespace set-role ${namespace} <user> owner\`)`,
      });
    }
  }

  private usersOrRefuse(): UserDirectory {
    if (this.opts.users) return this.opts.users;
    throw new AppError(
      'UNSUPPORTED_OPERATION',
      'Namespace members are managed on a server: local mode has no other users',
      {
        hint: 'run `agents serve` for your team, and manage members there (agents --server <url> namespace add-member …)',
      },
    );
  }

  private audit(
    by: Principal,
    event: 'namespace.created' | 'namespace.deleted' | 'member.added' | 'member.removed' | 'member.role-changed',
    namespace: string,
    target: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.opts.audit?.record({ event, by, namespace, target, outcome: 'ok', details }) ?? Promise.resolve();
  }
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function describeContents(c: NamespaceContents): string {
  const parts = [
    c.entities && count(c.entities, 'registry entity').replace('entitys', 'entities'),
    c.sessions && count(c.sessions, 'session'),
    c.tasks && count(c.tasks, 'task'),
    c.plans && count(c.plans, 'plan'),
  ].filter((p): p is string => typeof p === 'string');
  return parts.join(', ');
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

/**
 * The one answer for a namespace that does not exist and one the caller does not belong to (the
 * dispatcher's authorize step gives it too): the same code, message, details and hint.
 */
export function namespaceNotFound(name: string): AppError {
  return new AppError('NOT_FOUND', `Namespace ${name} was not found`, {
    details: { entity: 'namespace', name },
    hint: 'see your namespaces with `agents namespace list`',
  });
}

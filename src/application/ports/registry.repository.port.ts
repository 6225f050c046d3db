import type { Role } from '../../domain/permissions.ts';
import type { DefinitionOf, PathFacts, Referrer } from '../../domain/registry/derived-facts.ts';
import type { Reference, RegistryEntity, RegistryKind } from '../../domain/registry/entities.ts';

export interface RegistryListQuery {
  kind: RegistryKind;
  /** Only these namespaces (the caller's, or one of them). */
  namespaces: readonly string[];
  /** The kind's type field (resource type, tool source, actor provider). */
  type?: string | undefined;
}

export type { Referrer } from '../../domain/registry/derived-facts.ts';

/** A stored entity of kind K: its definition is that kind's. */
export type EntityOf<K extends RegistryKind> = RegistryEntity<DefinitionOf<K>> & { kind: K };

/**
 * An entity of kind K by name, typed by its kind (the registry service's `lookup` and `use`):
 * undefined when there is none.
 */
export type RegistryLookup = <K extends RegistryKind>(kind: K, name: string) => Promise<EntityOf<K> | undefined>;

/**
 * Whether the entity is of the kind, and so has that kind's definition: entities are stored and
 * read by kind, and only a definition that passed its kind's schema is stored. The one place a
 * stored entity becomes typed by its kind.
 */
export function isOfKind<K extends RegistryKind>(e: RegistryEntity, kind: K): e is EntityOf<K> {
  return e.kind === kind;
}

/** Stored registry entities and the references between them. */
export interface RegistryRepository {
  get(kind: RegistryKind, name: string): Promise<RegistryEntity | undefined>;
  /** Every matching entity, ordered by name (registries hold hundreds, not millions). */
  list(query: RegistryListQuery): Promise<RegistryEntity[]>;
  /** Inserts a new entity; ALREADY_EXISTS when the name is taken. */
  insert(entity: RegistryEntity, refs: readonly Reference[], typeField: string | null): Promise<void>;
  /** Replaces the entity if its stored revision is still `expectedRevision`; false otherwise. */
  replace(
    entity: RegistryEntity,
    expectedRevision: number,
    refs: readonly Reference[],
    typeField: string | null,
  ): Promise<boolean>;
  delete(kind: RegistryKind, name: string): Promise<boolean>;
  /** Entities whose definitions refer to this one. */
  referrers(kind: RegistryKind, name: string): Promise<Referrer[]>;
  countByNamespace(namespace: string): Promise<Partial<Record<RegistryKind, number>>>;
}

export type { Role } from '../../domain/permissions.ts';

export interface NamespaceRecord {
  name: string;
  owner: string;
  createdAt: string;
}

export interface Member {
  principal: string;
  role: Role;
  addedAt: string;
}

export interface NamespaceRepository {
  /** Namespaces the principal is a member of, with its role. */
  forPrincipal(principal: string): Promise<Array<NamespaceRecord & { role: Role }>>;
  get(name: string): Promise<NamespaceRecord | undefined>;
  members(name: string): Promise<Member[]>;
  roleOf(name: string, principal: string): Promise<Role | undefined>;
  /** Creates the namespace with its first member, the owner, in one transaction (false: it exists). */
  create(name: string, owner: string, at: string): Promise<boolean>;
  /** Adds a member or changes the role of one. */
  setMember(name: string, principal: string, role: Role, at: string): Promise<void>;
  /** Removes a member (false: it was not one). */
  removeMember(name: string, principal: string): Promise<boolean>;
  /** What the namespace holds: registry entities, sessions, tasks and plans (all its own). */
  contents(name: string): Promise<NamespaceContents>;
  /** The users whose default namespace it is (server mode; none in local mode). */
  defaultFor(name: string): Promise<string[]>;
  /**
   * Deletes the namespace with everything still in it, in one transaction: its registry entities
   * (and their references), sessions, tasks, plans and memberships. What was deleted.
   */
  purge(name: string): Promise<NamespaceContents>;
  /**
   * A number that changes whenever namespaces or memberships may have changed, by this process or
   * another. Optional: without it, what depends on them is read again every time.
   */
  version?(): number;
}

/** How much a namespace holds. */
export interface NamespaceContents {
  entities: number;
  sessions: number;
  tasks: number;
  plans: number;
}

/** What the file system says about a resource's path (on the machine the agent runs on). */
export type { PathFacts } from '../../domain/registry/derived-facts.ts';

export interface ResourceInspector {
  inspect(path: string, branch?: string): Promise<PathFacts>;
  /**
   * The directory `given` names within `scope`, or undefined when it is not an existing directory
   * there — whatever the reason (missing, outside, through a symlink that leaves, inside `.git`),
   * so that a refusal tells nothing about the host.
   */
  resolve(given: string, scope: PathScope): Promise<ResolvedPath | undefined>;
}

/** Where a path may lie: the namespace's workspace, and the host directories a grant names. */
export interface PathScope {
  /** The namespace's workspace directory (absolute), when the server has workspaces. */
  workspace?: string | undefined;
  /** host-path held: `any` (every host path) or these directories. */
  granted?: 'any' | readonly string[] | undefined;
}

/** A resolved path: its real location, and how a definition keeps it (relative inside the workspace). */
export interface ResolvedPath {
  real: string;
  stored: string;
}

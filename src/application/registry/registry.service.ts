import type { ApiKeys } from '../ports/language-model.port.ts';
import type { McpHub } from '../ports/mcp.port.ts';
import { createHash } from 'node:crypto';
import { AppError, messageOf } from '../../domain/errors.ts';
import { PLURAL, type Definition, type RegistryEntity, type RegistryKind } from '../../domain/registry/entities.ts';
import { pageOf } from '../../domain/paging.ts';
import type { DerivedFacts } from '../../domain/registry/derived-facts.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import type { Principal } from '../ports/principal.ts';
import {
  isOfKind,
  type EntityOf,
  type Referrer,
  type RegistryRepository,
  type ResourceInspector,
} from '../ports/registry.repository.port.ts';
import type { AuditRecorder } from '../accounts/audit.service.ts';
import type { CapabilityService } from './capability.service.ts';
import { DefinitionChecks, resourceWriteRefusal, type DefinitionInput } from './definition-checks.service.ts';
import { deriveFacts } from './derive-facts.ts';
import type { NamespaceAccess } from './namespace-access.service.ts';
import { shownTo } from './registry-reveal.ts';

export type { DefinitionInput } from './definition-checks.service.ts';
export type { EntityOf } from '../ports/registry.repository.port.ts';

export interface ListInput {
  namespace?: string | undefined;
  nameRegex?: string | undefined;
  type?: string | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
}

export interface ListOutput<K extends RegistryKind = RegistryKind> {
  items: Array<EntityOf<K>>;
  nextPageToken: string;
  totalSize: number;
  summary: { byNamespace: Record<string, number>; byType: Record<string, number> };
}

/** What `show` returns for kind K: the entity and that kind's derived facts. */
export type ShownEntity<K extends RegistryKind = RegistryKind> = EntityOf<K> & { derived: DerivedFacts<K> };

/** The field of each kind that `list --type` filters on. */
const TYPE_FIELD: Record<RegistryKind, string | undefined> = {
  actor: 'provider',
  tool: 'source',
  resource: 'type',
  skill: undefined,
  project: undefined,
  action: undefined,
  'automation-profile': undefined,
  hook: 'event',
};

export interface RegistryServiceDeps {
  repo: RegistryRepository;
  namespaces: NamespaceAccess;
  inspector: ResourceInspector;
  builtins: Partial<Record<RegistryKind, readonly Definition[]>>;
  /** Models a `provider: builtin` actor may name (the deterministic actors that can run). */
  builtinModels: readonly string[];
  /** What each namespace may make the server do (issue #35). */
  capabilities: CapabilityService;
  /** LLM actors' keys and MCP servers, for what `show` says of actors and skills. */
  llm?: { keys: ApiKeys; mcp: McpHub } | undefined;
  /** Where additions, changes and removals are recorded (who, kind, name, namespace). */
  audit?: AuditRecorder | undefined;
  now?: () => Date;
}

const BUILTIN_SINCE = '2026-01-01T00:00:00.000Z';

/**
 * The six registries behind one service: strict, located validation; namespaced names; revisions
 * with optimistic concurrency; references checked on write and on removal.
 */
export class RegistryService {
  private readonly builtins = new Map<string, RegistryEntity>();
  private readonly now: () => Date;
  private readonly checks: DefinitionChecks;

  private readonly deps: RegistryServiceDeps;

  constructor(deps: RegistryServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
    this.checks = new DefinitionChecks({ ...deps, lookup: (k, n) => this.lookup(k, n) });
    for (const [kind, defs] of Object.entries(deps.builtins) as Array<[RegistryKind, readonly Definition[]]>) {
      for (const d of defs) {
        this.builtins.set(`${kind}:${d.name}`, {
          kind,
          name: d.name,
          namespace: namespaceOf(d.name),
          revision: 1,
          contentHash: contentHash(d),
          createdAt: BUILTIN_SINCE,
          updatedAt: BUILTIN_SINCE,
          builtin: true,
          definition: d,
        });
      }
    }
  }

  /**
   * Whether answers to the principal may show host paths: in local mode (the user's own machine)
   * and to a server's administrators (the host is theirs), never to a server's other users.
   */
  showsHostPaths(principal: Principal): boolean {
    return this.deps.capabilities.mode === 'local' || principal.admin;
  }

  /** Text for the namespace's users, without the server's own directories (see CapabilityService.redact). */
  redactHostPaths(text: string, namespace: string): Promise<string> {
    return this.deps.capabilities.redact(text, namespace);
  }

  /** How many built-in entities of each kind ship. */
  builtinCounts(): Partial<Record<RegistryKind, number>> {
    const out: Partial<Record<RegistryKind, number>> = {};
    for (const e of this.builtins.values()) out[e.kind] = (out[e.kind] ?? 0) + 1;
    return out;
  }

  async list<K extends RegistryKind>(kind: K, q: ListInput, principal: Principal): Promise<ListOutput<K>> {
    if (q.type !== undefined && TYPE_FIELD[kind] === undefined)
      throw new AppError('INVALID_PARAMS', `type does not apply to ${kind}s: they have no type to filter on`, {
        fields: [{ field: 'type', description: 'filters actors (provider), tools (source) and resources (type) only' }],
      });
    let regex: RegExp | undefined;
    if (q.nameRegex !== undefined) {
      try {
        regex = new RegExp(q.nameRegex);
      } catch (err) {
        throw new AppError('INVALID_PARAMS', `nameRegex is not a valid regular expression: ${messageOf(err)}`, {
          fields: [{ field: 'nameRegex', description: 'must be a JavaScript regular expression' }],
        });
      }
    }
    const readable = await this.deps.namespaces.readable(principal);
    const namespaces = q.namespace === undefined ? readable : readable.filter((n) => n === q.namespace);
    const stored = namespaces.length === 0 ? [] : await this.deps.repo.list({ kind, namespaces, type: q.type });
    const field = TYPE_FIELD[kind];
    const builtins = [...this.builtins.values()].filter(
      (e): e is EntityOf<K> =>
        e.kind === kind && namespaces.includes(e.namespace) && (q.type === undefined || typeOf(e, field) === q.type),
    );
    const all = [...builtins, ...stored.filter((e) => isOfKind(e, kind))]
      .filter((e) => !regex || regex.test(e.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const summary = { byNamespace: {} as Record<string, number>, byType: {} as Record<string, number> };
    for (const e of all) {
      summary.byNamespace[e.namespace] = (summary.byNamespace[e.namespace] ?? 0) + 1;
      const t = typeOf(e, field);
      if (t !== undefined) summary.byType[t] = (summary.byType[t] ?? 0) + 1;
    }
    // Names are unique within a kind: the name is both the sort key and the id of a position.
    const page = pageOf(all, (e) => ({ key: e.name, id: e.name }), {
      pageToken: q.pageToken,
      pageSize: q.pageSize ?? 50,
      order: 'asc',
    });
    return { items: page.items, nextPageToken: page.nextPageToken, totalSize: all.length, summary };
  }

  /** Entries as an answer shows them to the caller: credential values hidden unless revealed (registry-reveal.ts). */
  shownTo<E extends { namespace: string; definition: unknown }>(
    entries: readonly E[],
    principal: Principal,
    reveal = false,
  ): Promise<E[]> {
    return shownTo(entries, principal, reveal, this.deps.namespaces);
  }

  async show<K extends RegistryKind>(kind: K, name: string, principal: Principal): Promise<ShownEntity<K>> {
    const entity = await this.visible(kind, name, principal);
    const usedBy = await this.deps.repo.referrers(kind, name);
    const derived = await deriveFacts(kind, entity.definition, {
      usedBy,
      lookup: (k, n) => this.lookup(k, n),
      inspector: this.deps.inspector,
      builtinModels: this.deps.builtinModels,
      llm: this.deps.llm,
      rootOf: (r) =>
        this.deps.capabilities
          .resourceRoot({ name: r.name, namespace: namespaceOf(r.name), definition: r })
          .catch(() => undefined),
      refusal: (k, d) =>
        this.deps.capabilities
          .assertUsable({ kind: k, name: d.name, namespace: namespaceOf(d.name), definition: d })
          .then(
            () => undefined,
            (err: Error) => err.message,
          ),
    });
    return { ...entity, derived };
  }

  /**
   * An entity about to be used (a plan's step, a chat's tools, an actor's turn): undefined when it
   * does not exist; refused (FORBIDDEN) when it needs a capability its namespace no longer holds.
   * A resource comes back with its real directory as `path` (resolved and checked again now).
   */
  async use<K extends RegistryKind>(kind: K, name: string): Promise<EntityOf<K> | undefined> {
    const e = await this.lookup(kind, name);
    if (!e) return undefined;
    if (isOfKind(e, 'resource') && e.definition.type !== 'git-remote') {
      const root = await this.deps.capabilities.resourceRoot({ ...e, definition: e.definition });
      return root === e.definition.path ? e : { ...e, definition: { ...e.definition, path: root } };
    }
    await this.deps.capabilities.assertUsable(e);
    return e;
  }

  /**
   * Refuses a plan on projects whose resources the principal may not write: a plan applies into
   * them, so each resource's namespace needs the role member or above (checked at every phase).
   */
  async assertMayApplyInto(projects: readonly string[], principal: Principal): Promise<void> {
    for (const p of projects) {
      const project = await this.lookup('project', p);
      for (const r of project?.definition.resources ?? []) {
        const ns = namespaceOf(r);
        if (await this.deps.namespaces.mayWrite(ns, principal)) continue;
        throw new AppError('FORBIDDEN', `Project ${p} names resource ${r}: ${resourceWriteRefusal(r, ns)}`, {
          details: { project: p, resource: r, namespace: ns },
          hint: `ask an owner or admin of ${ns} to make you a member (agents namespace add-member ${ns} <you> --role member)`,
        });
      }
    }
  }

  /** An entity by name without access checks (internal use: plans, actor resolution). */
  async lookup<K extends RegistryKind>(kind: K, name: string): Promise<EntityOf<K> | undefined> {
    const e = this.builtins.get(`${kind}:${name}`) ?? (await this.deps.repo.get(kind, name));
    return e && isOfKind(e, kind) ? e : undefined;
  }

  async add(kind: RegistryKind, input: DefinitionInput, principal: Principal): Promise<RegistryEntity> {
    const { definition, refs } = await this.checks.prepare(kind, input, principal);
    if (await this.lookup(kind, definition.name)) {
      throw new AppError('ALREADY_EXISTS', `A ${kind} named ${definition.name} already exists`, {
        details: { entity: kind, name: definition.name },
        hint: `change it with \`agents ${kind} update\`, or pick another name`,
      });
    }
    const at = this.now().toISOString();
    const entity: RegistryEntity = {
      kind,
      name: definition.name,
      namespace: namespaceOf(definition.name),
      revision: 1,
      contentHash: contentHash(definition),
      createdAt: at,
      updatedAt: at,
      builtin: false,
      definition,
    };
    await this.deps.repo.insert(entity, refs, typeOf(entity, TYPE_FIELD[kind]) ?? null);
    await this.audit('definition.added', entity, principal);
    return entity;
  }

  async update(
    kind: RegistryKind,
    name: string,
    input: DefinitionInput,
    expectedRevision: number | undefined,
    principal: Principal,
  ): Promise<RegistryEntity & { unchanged: boolean }> {
    const current = await this.visible(kind, name, principal);
    if (current.builtin) throw builtinRefused(kind, name);
    const { definition, refs } = await this.checks.prepare(kind, input, principal, name);
    if (expectedRevision !== undefined && expectedRevision !== current.revision)
      throw staleRevision(kind, name, expectedRevision, current.revision);
    const hash = contentHash(definition);
    if (hash === current.contentHash) return { ...current, unchanged: true };
    const next: RegistryEntity = {
      ...current,
      definition,
      contentHash: hash,
      revision: current.revision + 1,
      updatedAt: this.now().toISOString(),
    };
    if (!(await this.deps.repo.replace(next, current.revision, refs, typeOf(next, TYPE_FIELD[kind]) ?? null))) {
      const latest = await this.deps.repo.get(kind, name);
      throw staleRevision(kind, name, current.revision, latest?.revision ?? current.revision);
    }
    await this.audit('definition.updated', next, principal);
    return { ...next, unchanged: false };
  }

  async remove(
    kind: RegistryKind,
    name: string,
    force: boolean,
    principal: Principal,
  ): Promise<{ removed: true; kind: RegistryKind; name: string; danglingReferrers: Referrer[] }> {
    const current = await this.visible(kind, name, principal);
    if (current.builtin) throw builtinRefused(kind, name);
    await this.deps.namespaces.assertWritable(current.namespace, principal);
    const referrers = await this.deps.repo.referrers(kind, name);
    if (referrers.length > 0 && !force) {
      const list = referrers.map((r) => `${r.kind} ${r.name}`).join(', ');
      throw new AppError('IN_USE', `${kind} ${name} is used by ${list}`, {
        details: { entity: kind, name, referrers },
        hint: `remove or change those first, or pass --force to remove it anyway`,
      });
    }
    await this.deps.repo.delete(kind, name);
    await this.audit('definition.removed', current, principal, { force, danglingReferrers: referrers.length });
    return { removed: true, kind, name, danglingReferrers: referrers };
  }

  /** Records a change of the registry: who, which kind and name, in which namespace, at which revision. */
  private audit(
    event: 'definition.added' | 'definition.updated' | 'definition.removed',
    e: RegistryEntity,
    by: Principal,
    more: Record<string, unknown> = {},
  ): Promise<void> {
    return (
      this.deps.audit?.record({
        event,
        by,
        namespace: e.namespace,
        target: e.name,
        outcome: 'ok',
        details: { kind: e.kind, revision: e.revision, ...more },
      }) ?? Promise.resolve()
    );
  }

  /** The entity if the caller may read it; otherwise "not found", whether or not it exists. */
  /** An entity the principal may read, without the derived facts (NOT_FOUND otherwise). */
  async visible<K extends RegistryKind>(kind: K, name: string, principal: Principal): Promise<EntityOf<K>> {
    const e = await this.lookup(kind, name);
    if (!e || !(await this.deps.namespaces.readable(principal)).includes(e.namespace)) {
      throw new AppError('NOT_FOUND', `No ${kind} named ${name}`, {
        details: { entity: kind, name },
        hint: `see the available ones with \`agents ${kind} list\``,
      });
    }
    return e;
  }
}

function typeOf(e: RegistryEntity, field: string | undefined): string | undefined {
  if (!field) return undefined;
  const v: unknown = Reflect.get(e.definition, field);
  return typeof v === 'string' ? v : undefined;
}

/** sha256 of the definition's canonical JSON (keys sorted), so equal content has equal hashes. */
function contentHash(d: unknown): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(canon(d)))
    .digest('hex')}`;
}

function builtinRefused(kind: RegistryKind, name: string): AppError {
  return new AppError('FORBIDDEN', `${kind} ${name} is built in and cannot be changed or removed`, {
    details: { entity: kind, name },
    hint: `define your own ${kind} in local/ instead`,
  });
}

function staleRevision(kind: RegistryKind, name: string, expected: number, actual: number): AppError {
  return new AppError(
    'REVISION_CONFLICT',
    `${kind} ${name} is at revision ${actual}, not ${expected}; nothing was written`,
    {
      details: { entity: kind, name, expectedRevision: expected, revision: actual },
      hint: `read it again with \`agents ${kind} show ${name}\` and retry with --expected-revision ${actual}`,
    },
  );
}

export { PLURAL };

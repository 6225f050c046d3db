import type { ApiKeys } from '../ports/language-model.port.js';
import type { McpHub } from '../ports/mcp.port.js';
import { createHash } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { AppError, type FieldViolation } from '../../domain/errors.js';
import {
  DEFINITION_SCHEMAS,
  PLURAL,
  referencesOf,
  type Definition,
  type Reference,
  type RegistryEntity,
  type RegistryKind,
  type ResourceDefinition,
} from '../../domain/registry/entities.js';
import { pageOf } from '../../domain/paging.js';
import type { DefinitionOf, DerivedFacts } from '../../domain/registry/derived-facts.js';
import { namespaceOf } from '../../domain/registry/names.js';
import type { Principal } from '../ports/principal.js';
import type { Referrer, RegistryRepository, ResourceInspector } from '../ports/registry.repository.port.js';
import { type CapabilityService, capabilityViolations, grantHint } from './capability.service.js';
import { definitionError } from './definition-error.js';
import { deriveFacts } from './derived-facts.js';
import type { NamespaceService } from './namespace.service.js';

export interface DefinitionInput {
  definition?: Record<string, unknown> | undefined;
  source?: { text: string; filename?: string | undefined; baseDir?: string | undefined } | undefined;
}

export interface ListInput {
  namespace?: string | undefined;
  nameRegex?: string | undefined;
  type?: string | undefined;
  pageSize?: number | undefined;
  pageToken?: string | undefined;
}

export interface ListOutput {
  items: RegistryEntity[];
  nextPageToken: string;
  totalSize: number;
  summary: { byNamespace: Record<string, number>; byType: Record<string, number> };
}

/** A stored entity of kind K: its definition is that kind's. */
export type EntityOf<K extends RegistryKind> = RegistryEntity<DefinitionOf<K>> & { kind: K };
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
  namespaces: NamespaceService;
  inspector: ResourceInspector;
  builtins: Partial<Record<RegistryKind, readonly Definition[]>>;
  /** Models a `provider: builtin` actor may name (the deterministic actors that can run). */
  builtinModels: readonly string[];
  /** What each namespace may make the server do (issue #35). */
  capabilities: CapabilityService;
  /** LLM actors' keys and MCP servers, for what `show` says of actors and skills. */
  llm?: { keys: ApiKeys; mcp: McpHub } | undefined;
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

  constructor(private readonly deps: RegistryServiceDeps) {
    this.now = deps.now ?? (() => new Date());
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

  /** How many built-in entities of each kind ship. */
  builtinCounts(): Partial<Record<RegistryKind, number>> {
    const out: Partial<Record<RegistryKind, number>> = {};
    for (const e of this.builtins.values()) out[e.kind] = (out[e.kind] ?? 0) + 1;
    return out;
  }

  async list(kind: RegistryKind, q: ListInput, principal: Principal): Promise<ListOutput> {
    if (q.type !== undefined && TYPE_FIELD[kind] === undefined)
      throw new AppError('INVALID_PARAMS', `type does not apply to ${kind}s: they have no type to filter on`, {
        fields: [{ field: 'type', description: 'filters actors (provider), tools (source) and resources (type) only' }],
      });
    let regex: RegExp | undefined;
    if (q.nameRegex !== undefined) {
      try {
        regex = new RegExp(q.nameRegex);
      } catch (err) {
        throw new AppError('INVALID_PARAMS', `nameRegex is not a valid regular expression: ${(err as Error).message}`, {
          fields: [{ field: 'nameRegex', description: 'must be a JavaScript regular expression' }],
        });
      }
    }
    const readable = await this.deps.namespaces.readable(principal);
    const namespaces = q.namespace === undefined ? readable : readable.filter((n) => n === q.namespace);
    const stored = namespaces.length === 0 ? [] : await this.deps.repo.list({ kind, namespaces, type: q.type });
    const field = TYPE_FIELD[kind];
    const builtins = [...this.builtins.values()].filter(
      (e) =>
        e.kind === kind && namespaces.includes(e.namespace) && (q.type === undefined || typeOf(e, field) === q.type),
    );
    const all = [...builtins, ...stored]
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
  async use(kind: RegistryKind, name: string): Promise<RegistryEntity | undefined> {
    const e = await this.lookup(kind, name);
    if (!e) return undefined;
    if (kind === 'resource') {
      const root = await this.deps.capabilities.resourceRoot(e);
      return root === (e.definition as ResourceDefinition).path
        ? e
        : { ...e, definition: { ...(e.definition as ResourceDefinition), path: root } };
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
      for (const r of (project?.definition as { resources?: string[] } | undefined)?.resources ?? []) {
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
  async lookup(kind: RegistryKind, name: string): Promise<RegistryEntity | undefined> {
    return this.builtins.get(`${kind}:${name}`) ?? (await this.deps.repo.get(kind, name));
  }

  async add(kind: RegistryKind, input: DefinitionInput, principal: Principal): Promise<RegistryEntity> {
    const { definition, refs } = await this.prepare(kind, input, principal);
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
    const { definition, refs } = await this.prepare(kind, input, principal, name);
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
    return { removed: true, kind, name, danglingReferrers: referrers };
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
    // Entities are stored and looked up by kind, and only a definition that passed that kind's
    // schema is stored: the definition is K's.
    return e as EntityOf<K>;
  }

  /** Parses, validates (schema, write access, references, the file system) and reports every problem at once. */
  private async prepare(
    kind: RegistryKind,
    input: DefinitionInput,
    principal: Principal,
    expectedName?: string,
  ): Promise<{ definition: Definition; refs: Reference[] }> {
    // The YAML parser loads with the first definition given as text, not with every agent.
    const parsed = input.source
      ? (await import('./definition-source.js')).parseDefinitionSource(
          input.source.text,
          input.source.filename ?? `<${kind} definition>`,
        )
      : { value: input.definition ?? {}, lineOf: () => undefined, filename: `<${kind} definition>` };
    const raw = structuredClone(parsed.value) as Record<string, unknown>;
    const baseDir = input.source?.baseDir;
    // A client's directory means nothing to a server: there, relative paths are the workspace's —
    // unless the namespace may name any host path (the administrator's local/, on the server's machine).
    if (
      kind === 'resource' &&
      (await this.deps.capabilities.anyHostPath(typeof raw['name'] === 'string' ? raw['name'] : '')) &&
      typeof raw['path'] === 'string' &&
      !isAbsolute(raw['path']) &&
      baseDir &&
      isAbsolute(baseDir)
    ) {
      raw['path'] = resolve(baseDir, raw['path']);
    }
    const at = (path: ReadonlyArray<PropertyKey>, description: string): FieldViolation => {
      const v: FieldViolation = { field: fieldPath(path), description, file: parsed.filename };
      const line = parsed.lineOf(path);
      if (line !== undefined) v.line = line;
      return v;
    };
    const result = DEFINITION_SCHEMAS[kind].safeParse(raw);
    const problems: FieldViolation[] = result.success
      ? []
      : result.error.issues.flatMap((i) =>
          // An unknown key is reported where it is written, one problem per key.
          i.code === 'unrecognized_keys'
            ? i.keys.map((k) =>
                at([...i.path, k], `is not a field of ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} definition`),
              )
            : [at(i.path, i.message)],
        );
    // References are checked even when other fields are wrong, so one run reports everything.
    const definition = (result.success ? result.data : raw) as Definition;
    const name = typeof definition.name === 'string' ? definition.name : '';
    if (result.success) {
      if (expectedName !== undefined && name !== expectedName) {
        problems.push(
          at(['name'], `is ${name}, but this updates ${expectedName} (entities cannot be renamed: remove and add)`),
        );
      }
      await this.deps.namespaces.assertWritable(namespaceOf(name), principal);
    }
    const refs = safeReferences(kind, definition);
    const readable = await this.deps.namespaces.readable(principal);
    for (const ref of refs) {
      if (ref.kind === kind && ref.name === name) {
        problems.push(at(ref.path, `refers to itself`));
        continue;
      }
      const target = await this.lookup(ref.kind, ref.name);
      if (!target || !readable.includes(target.namespace))
        problems.push(at(ref.path, `no ${ref.kind} named ${ref.name} (see \`agents ${ref.kind} list\`)`));
      else if (ref.kind === 'resource' && !(await this.deps.namespaces.mayWrite(target.namespace, principal)))
        problems.push(at(ref.path, resourceWriteRefusal(ref.name, target.namespace)));
    }
    if (!result.success) throw definitionError(parsed.filename, sortByLine(problems));
    const declared = await this.deps.capabilities.declarationProblems(kind, definition, namespaceOf(name), principal);
    if (declared.problems.length > 0) {
      const violations = sortByLine(capabilityViolations(declared.problems, at));
      const n = violations.length;
      const lines = violations.map(
        (v) => `  ${v.file ?? parsed.filename}${v.line ? `:${v.line}` : ''}: ${v.field}: ${v.description}`,
      );
      throw new AppError(
        'FORBIDDEN',
        `${parsed.filename}: ${n} field${n === 1 ? ' needs a capability' : 's need capabilities'} namespace ${namespaceOf(name)} does not hold:\n${lines.join('\n')}`,
        {
          fields: violations,
          details: {
            namespace: namespaceOf(name),
            capabilities: [...new Set(declared.problems.map((p) => p.capability))],
          },
          hint: grantHint(namespaceOf(name), declared.problems[0]?.capability ?? 'runs-program'),
        },
      );
    }
    if (declared.pathProblem !== undefined) problems.push(at(['path'], declared.pathProblem));
    const stored =
      kind === 'resource' && declared.resourcePath
        ? ({ ...definition, path: declared.resourcePath.stored } as Definition)
        : definition;
    problems.push(...(await this.checkKind(kind, stored, at, declared.resourcePath?.real)));
    if (problems.length > 0) throw definitionError(parsed.filename, sortByLine(problems));
    return { definition: stored, refs };
  }

  /** `real`: a resource's directory as the capability check resolved it (it exists and is allowed). */
  private async checkKind(
    kind: RegistryKind,
    d: Definition,
    at: (p: ReadonlyArray<PropertyKey>, m: string) => FieldViolation,
    real?: string,
  ): Promise<FieldViolation[]> {
    const out: FieldViolation[] = [];
    if (kind === 'resource' && 'path' in d && 'type' in d && real !== undefined) {
      const branch = d.type === 'git-checkout' ? d.branch : undefined;
      const facts = await this.deps.inspector.inspect(real, branch);
      if (!facts.exists || !facts.isDirectory) out.push(at(['path'], `${d.path} is not a directory`));
      else if (d.type === 'git-checkout' && !facts.gitWorkTree)
        out.push(at(['path'], `${d.path} is not a git work tree (run \`git init\` there, or use type fs-directory)`));
      else if (branch && facts.branchExists === false)
        out.push(at(['branch'], `branch ${branch} does not exist in ${d.path}`));
    }
    if (kind === 'actor' && 'provider' in d && d.provider === 'builtin' && !this.deps.builtinModels.includes(d.model)) {
      out.push(at(['model'], `a builtin actor runs one of: ${this.deps.builtinModels.join(', ')}`));
    }
    return out;
  }
}

/** References of a definition that may not have passed validation: only well-formed names count. */
function safeReferences(kind: RegistryKind, d: Definition): Reference[] {
  try {
    return referencesOf(kind, d).filter(
      (r) => typeof r.name === 'string' && /^[a-z][a-z0-9_-]*\/[a-z][a-z0-9_-]*$/.test(r.name),
    );
  } catch {
    return [];
  }
}

const sortByLine = (p: FieldViolation[]): FieldViolation[] =>
  [...p].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));

function typeOf(e: RegistryEntity, field: string | undefined): string | undefined {
  if (!field) return undefined;
  const v = (e.definition as unknown as Record<string, unknown>)[field];
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

function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return (
    path.reduce<string>(
      (acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${String(k)}` : String(k)),
      '',
    ) || '(definition)'
  );
}

/** A project may name another namespace's resource only where its plans could write: member or above. */
function resourceWriteRefusal(resource: string, namespace: string): string {
  return `you may read resource ${resource} but not write it: the project's plans and chats change its files, which needs the role member (or above) in namespace ${namespace}`;
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

import { AppError } from '../../domain/errors.ts';
import type { Role } from '../../domain/permissions.ts';
import type { RegistryEntity, RegistryKind } from '../../domain/registry/entities.ts';
import { BUILTIN_NAMESPACE, DEFAULT_NAMESPACE, namespaceOf } from '../../domain/registry/names.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { Principal } from '../ports/principal.ts';
import type { NamespaceRepository, ResourceInspector } from '../ports/registry.repository.port.ts';
import type {
  RemoteConnection,
  RemoteConnectionStore,
  RemoteEntity,
  SyncBase,
  SyncRemote,
  SyncRemoteFactory,
  SyncStateStore,
} from '../ports/sync.port.ts';
import type { NamespaceService } from '../registry/namespace.service.ts';
import type { RegistryService } from '../registry/registry.service.ts';

const WRITE_ROLES: ReadonlySet<Role> = new Set(['owner', 'admin', 'member']);

/**
 * The kinds that sync, in the order they are written: what an entity refers to is written before it
 * (tools before the skills and actors that use them, resources and actors before projects).
 */
export const SYNC_KINDS: readonly RegistryKind[] = [
  'tool',
  'skill',
  'actor',
  'automation-profile',
  'resource',
  'project',
  'action',
  'hook',
];

export type SyncEntityState = 'ahead' | 'behind' | 'conflict' | 'in-sync' | 'server-only' | 'local-only';

export interface SyncEntityStatus {
  kind: RegistryKind;
  name: string;
  namespace: string;
  state: SyncEntityState;
  /** The local content hash (absent: not here). */
  localHash?: string | undefined;
  /** The local revision (absent: not here). */
  localRevision?: number | undefined;
  /** The server's revision (absent: not on the server). */
  serverRevision?: number | undefined;
  /** The server revision both sides agreed on at the last pull or push (absent: never synced). */
  baseRevision?: number | undefined;
}

/**
 * Where an entity stands: the local side changed if its hash is not the one recorded at the last
 * sync; the server's side if its revision (or hash) is not. Without a record, equal definitions
 * are in sync and different ones a conflict (nobody can tell which is newer).
 */
export function syncStateOf(
  local: { contentHash: string } | undefined,
  server: { revision: number; contentHash: string } | undefined,
  base: { revision: number; contentHash: string; localHash: string } | undefined,
  sameWithoutBase = false,
): SyncEntityState {
  if (!local && !server) return 'in-sync';
  if (!server) return 'local-only';
  if (!local) return 'server-only';
  if (!base) return sameWithoutBase || local.contentHash === server.contentHash ? 'in-sync' : 'conflict';
  const localChanged = local.contentHash !== base.localHash;
  const serverChanged = server.revision !== base.revision || server.contentHash !== base.contentHash;
  if (localChanged && serverChanged) return 'conflict';
  if (localChanged) return 'ahead';
  if (serverChanged) return 'behind';
  return 'in-sync';
}

export interface SyncDeps {
  registry: RegistryService;
  namespaces: NamespaceService;
  namespaceRepo: NamespaceRepository;
  inspector: ResourceInspector;
  state: SyncStateStore;
  connection: RemoteConnectionStore;
  remotes: SyncRemoteFactory;
  logger: Logger;
  now?: () => Date;
}

export interface ConnectInput {
  url: string;
  token: string;
  namespace?: string | undefined;
  autoPullSeconds?: number | undefined;
}

export interface SyncInput {
  namespaces?: string[] | undefined;
  force?: boolean | undefined;
  dryRun?: boolean | undefined;
}

export interface PullInput extends SyncInput {
  /** Local paths for resources, by resource name (kept for later pulls). */
  map?: Record<string, string> | undefined;
}

type Ref = { kind: RegistryKind; name: string };
export interface Overwritten extends Ref {
  /** The revision of the side that was overwritten, and the one written over it. */
  localRevision?: number | undefined;
  serverRevision?: number | undefined;
}
export interface Skipped extends Ref {
  reason: string;
  hint?: string | undefined;
}

export interface SyncResult {
  dryRun: boolean;
  /** What was (or, in a dry run, would be) written. */
  written: Array<Ref & { action: 'added' | 'updated'; revision?: number | undefined }>;
  overwritten: Overwritten[];
  skipped: Skipped[];
  failed: Array<Ref & { message: string }>;
}

interface Row {
  status: SyncEntityStatus;
  local?: RegistryEntity | undefined;
  server?: RemoteEntity | undefined;
  base?: SyncBase | undefined;
}

interface Snapshot {
  connection: RemoteConnection;
  remote: SyncRemote;
  roles: Map<string, Role>;
  namespaces: string[];
  rows: Row[];
}

const NOT_LOCAL = (): AppError =>
  new AppError('UNSUPPORTED_OPERATION', 'sync runs in a local setup, not on a server', {
    hint: 'on your machine: agents server connect URL, then agents sync status',
  });

const NOT_CONNECTED = (): AppError =>
  new AppError('INVALID_STATE', 'This local setup is not connected to a server', {
    hint: 'connect it first: agents server connect URL --token KEY',
  });

const LOCAL_STAYS = (): AppError =>
  new AppError('INVALID_PARAMS', 'local/ never leaves this machine: it is not pulled or pushed', {
    fields: [{ field: 'namespaces', description: 'name namespaces you share on the server (not local or builtin)' }],
    hint: 'move what you want to share into a shared namespace (see `agents sync status`)',
  });

/**
 * Sync between this local store and one server: the registry definitions of the user's shared
 * namespaces (never local/ or builtin/), compared by revision and content hash. Conflicts are
 * refused unless forced; nothing is overwritten silently; a resource's path is per machine.
 */
export class SyncService {
  private readonly now: () => Date;
  /** Pulls and pushes of this process run one after the other (an auto-pull and a request's pull never race). */
  private queue: Promise<unknown> = Promise.resolve();

  private readonly deps: SyncDeps;

  constructor(deps: SyncDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  async connect(
    input: ConnectInput,
    principal: Principal,
  ): Promise<{ url: string; user: string; namespaces: Array<{ name: string; role: Role }>; autoPullSeconds: number }> {
    assertLocal(principal);
    const remote = this.deps.remotes({ url: input.url, token: input.token });
    try {
      const who = await remote.whoami();
      const shared = who.namespaces.filter((n) => isShared(n.name));
      if (input.namespace !== undefined && !shared.some((n) => n.name === input.namespace))
        throw new AppError('NOT_FOUND', `Namespace ${input.namespace} was not found on ${input.url}`, {
          details: { entity: 'namespace', name: input.namespace },
          hint: `your namespaces there: ${shared.map((n) => n.name).join(', ') || 'none (ask an admin to add you)'}`,
        });
      const previous = await this.deps.connection.get().catch(() => undefined);
      // The user's shared namespaces exist here too, so their entities can be written locally and pushed.
      await this.ensureNamespaces(
        shared.map((n) => n.name).filter((n) => input.namespace === undefined || n === input.namespace),
      );
      const autoPullSeconds = input.autoPullSeconds ?? 300;
      await this.deps.connection.set({
        url: input.url,
        token: input.token,
        user: who.user,
        namespace: input.namespace,
        autoPullSeconds,
        paths: previous?.url === input.url ? previous.paths : undefined,
        lastPullAt: previous?.url === input.url ? previous.lastPullAt : undefined,
      });
      return { url: input.url, user: who.user, namespaces: shared, autoPullSeconds };
    } finally {
      await remote.close().catch(() => {});
    }
  }

  async disconnect(principal: Principal): Promise<{ disconnected: boolean; url?: string | undefined }> {
    assertLocal(principal);
    const c = await this.deps.connection.get().catch(() => undefined);
    const had = await this.deps.connection.clear();
    return { disconnected: had, url: c?.url };
  }

  /** The connection (never its token) and where each shared entity stands. */
  async status(
    input: { namespaces?: string[] | undefined },
    principal: Principal,
  ): Promise<{
    connection: {
      url: string;
      user: string;
      namespace?: string | undefined;
      autoPullSeconds: number;
      lastPullAt?: string | undefined;
    };
    namespaces: Array<{ name: string; role: Role }>;
    entities: SyncEntityStatus[];
  }> {
    const snap = await this.snapshot(input.namespaces, principal);
    try {
      const c = snap.connection;
      return {
        connection: {
          url: c.url,
          user: c.user,
          namespace: c.namespace,
          autoPullSeconds: c.autoPullSeconds,
          lastPullAt: c.lastPullAt,
        },
        namespaces: snap.namespaces.map((name) => ({ name, role: snap.roles.get(name) ?? 'viewer' })),
        entities: snap.rows.map((r) => r.status),
      };
    } finally {
      await snap.remote.close().catch(() => {});
    }
  }

  /** Just the connection, without asking the server (`agents server status`). */
  async connection(principal: Principal): Promise<{
    connected: boolean;
    url?: string | undefined;
    user?: string | undefined;
    namespace?: string | undefined;
    autoPullSeconds?: number | undefined;
    lastPullAt?: string | undefined;
    paths?: Record<string, string> | undefined;
  }> {
    assertLocal(principal);
    const c = await this.deps.connection.get();
    if (!c) return { connected: false };
    return {
      connected: true,
      url: c.url,
      user: c.user,
      namespace: c.namespace,
      autoPullSeconds: c.autoPullSeconds,
      lastPullAt: c.lastPullAt,
      paths: c.paths,
    };
  }

  /** Writes what the server has newer here; refuses conflicts unless forced (then reports them). */
  pull(input: PullInput, principal: Principal): Promise<SyncResult> {
    return this.exclusive(async () => {
      const snap = await this.snapshot(input.namespaces, principal);
      try {
        return await this.doPull(snap, input);
      } finally {
        await snap.remote.close().catch(() => {});
      }
    });
  }

  private async doPull(snap: Snapshot, input: PullInput): Promise<SyncResult> {
    const force = input.force === true;
    const dryRun = input.dryRun === true;
    const conflicts = snap.rows.filter((r) => r.status.state === 'conflict');
    if (conflicts.length > 0 && !force) throw conflictError('pull', conflicts);
    const paths = { ...snap.connection.paths, ...input.map };
    const result: SyncResult = { dryRun, written: [], overwritten: [], skipped: [], failed: [] };
    const todo = snap.rows.filter((r) => ['behind', 'server-only', 'conflict'].includes(r.status.state));
    for (const name of Object.keys(input.map ?? {})) {
      if (!snap.rows.some((r) => r.status.kind === 'resource' && r.status.name === name))
        result.skipped.push({ kind: 'resource', name, reason: `no resource named ${name} on the server` });
    }
    if (!dryRun) await this.ensureNamespaces(todo.map((r) => r.status.namespace));
    const principal = await this.deps.namespaces.localPrincipal();
    for (const row of todo) {
      const server = row.server;
      if (!server) continue;
      const { kind, name } = row.status;
      const definition = structuredClone(server.definition);
      if (kind === 'resource') {
        const serverPath = typeof definition['path'] === 'string' ? definition['path'] : undefined;
        const mapped = paths[name];
        const path = mapped ?? serverPath;
        if (path === undefined || !(await this.exists(path))) {
          result.skipped.push({
            kind,
            name,
            reason: mapped
              ? `the mapped path ${mapped} does not exist on this machine`
              : `its path ${serverPath ?? '(none)'} does not exist on this machine`,
            hint: `map it to a directory here: agents sync pull --map ${name}=/path/on/this/machine`,
          });
          continue;
        }
        definition['path'] = path;
      }
      const action = row.local ? 'updated' : 'added';
      if (row.status.state === 'conflict')
        result.overwritten.push({ kind, name, localRevision: row.local?.revision, serverRevision: server.revision });
      if (dryRun) {
        result.written.push({ kind, name, action, revision: server.revision });
        continue;
      }
      try {
        const written = row.local
          ? await this.deps.registry.update(kind, name, { definition }, undefined, principal)
          : await this.deps.registry.add(kind, { definition }, principal);
        await this.deps.state.put(snap.connection.url, {
          kind,
          name,
          revision: server.revision,
          contentHash: server.contentHash,
          localHash: written.contentHash,
          syncedAt: this.now().toISOString(),
        });
        result.written.push({ kind, name, action, revision: server.revision });
      } catch (err) {
        result.failed.push({ kind, name, message: messageOf(err) });
      }
    }
    if (!dryRun) {
      const latest = (await this.deps.connection.get()) ?? snap.connection;
      await this.deps.connection.set({
        ...latest,
        paths: Object.keys(paths).length > 0 ? paths : undefined,
        lastPullAt: this.now().toISOString(),
      });
    }
    return result;
  }

  /** Writes what changed here to the server where the user may write; conflicts refused unless forced. */
  push(input: SyncInput, principal: Principal): Promise<SyncResult> {
    return this.exclusive(async () => {
      const snap = await this.snapshot(input.namespaces, principal);
      try {
        return await this.doPush(snap, input);
      } finally {
        await snap.remote.close().catch(() => {});
      }
    });
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async doPush(snap: Snapshot, input: SyncInput): Promise<SyncResult> {
    const force = input.force === true;
    const dryRun = input.dryRun === true;
    const candidates = snap.rows.filter((r) => ['ahead', 'local-only', 'conflict'].includes(r.status.state));
    const result: SyncResult = { dryRun, written: [], overwritten: [], skipped: [], failed: [] };
    const writable = candidates.filter((r) => {
      const role = snap.roles.get(r.status.namespace);
      if (role && WRITE_ROLES.has(role)) return true;
      result.skipped.push({
        kind: r.status.kind,
        name: r.status.name,
        reason: `your role in ${r.status.namespace} on the server is ${role ?? 'none'}: it cannot be written`,
        hint: 'ask an owner or admin of the namespace for the member role',
      });
      return false;
    });
    const conflicts = writable.filter((r) => r.status.state === 'conflict');
    if (conflicts.length > 0 && !force) throw conflictError('push', conflicts);
    for (const row of writable) {
      const local = row.local;
      if (!local) continue;
      const { kind, name } = row.status;
      const definition = structuredClone(local.definition) as Record<string, unknown>;
      // A path of this machine never replaces the server's.
      if (kind === 'resource' && row.server && typeof row.server.definition['path'] === 'string')
        definition['path'] = row.server.definition['path'];
      const action = row.server ? 'updated' : 'added';
      if (row.status.state === 'conflict')
        result.overwritten.push({ kind, name, localRevision: local.revision, serverRevision: row.server?.revision });
      if (dryRun) {
        result.written.push({ kind, name, action, revision: row.server?.revision });
        continue;
      }
      try {
        const expected = row.status.state === 'conflict' ? row.server?.revision : row.base?.revision;
        const out = row.server
          ? await snap.remote.update(kind, name, definition, expected)
          : await snap.remote.add(kind, definition);
        if ('conflict' in out) {
          result.failed.push({
            kind,
            name,
            message: `the server moved to revision ${out.serverRevision} meanwhile (expected ${expected ?? '-'}); pull first`,
          });
          continue;
        }
        await this.deps.state.put(snap.connection.url, {
          kind,
          name,
          revision: out.revision,
          contentHash: out.contentHash,
          localHash: local.contentHash,
          syncedAt: this.now().toISOString(),
        });
        result.written.push({ kind, name, action, revision: out.revision });
      } catch (err) {
        result.failed.push({ kind, name, message: messageOf(err) });
      }
    }
    return result;
  }

  /**
   * Pulls (never forced) now if the last pull is older than the interval, then every interval
   * while the process lives (an unref'd timer). Errors are logged, never thrown. `first` settles
   * when the check at start is done.
   */
  startAutoPull(): { stop: () => void; first: Promise<void> } {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const run = async (): Promise<void> => {
      const c = await this.deps.connection.get().catch(() => undefined);
      if (stopped || !c || c.autoPullSeconds <= 0) return;
      const last = c.lastPullAt ? Date.parse(c.lastPullAt) : 0;
      if (this.now().getTime() - last >= c.autoPullSeconds * 1000) {
        try {
          const r = await this.pull({}, await this.deps.namespaces.localPrincipal());
          this.deps.logger.info({ written: r.written.length, skipped: r.skipped.length }, 'auto-pull done');
        } catch (err) {
          this.deps.logger.warn({ err: messageOf(err) }, 'auto-pull failed');
        }
      }
      if (!stopped) {
        timer = setTimeout(() => void run().catch(() => {}), c.autoPullSeconds * 1000);
        timer.unref();
      }
    };
    const first = run().catch((err: unknown) => this.deps.logger.warn({ err: messageOf(err) }, 'auto-pull failed'));
    return {
      first,
      stop: () => {
        stopped = true;
        if (timer) clearTimeout(timer);
      },
    };
  }

  private async snapshot(wanted: string[] | undefined, principal: Principal): Promise<Snapshot> {
    assertLocal(principal);
    if (wanted?.some((n) => !isShared(n))) throw LOCAL_STAYS();
    const connection = await this.deps.connection.get();
    if (!connection) throw NOT_CONNECTED();
    const remote = this.deps.remotes({ url: connection.url, token: connection.token });
    try {
      const who = await remote.whoami();
      const roles = new Map(who.namespaces.filter((n) => isShared(n.name)).map((n) => [n.name, n.role] as const));
      let namespaces = [...roles.keys()];
      if (connection.namespace !== undefined) namespaces = namespaces.filter((n) => n === connection.namespace);
      if (wanted) {
        const missing = wanted.filter((n) => !roles.has(n));
        if (missing.length > 0)
          throw new AppError('NOT_FOUND', `Namespace ${missing.join(', ')} was not found on ${connection.url}`, {
            details: { entity: 'namespace', name: missing[0] },
            hint: `your namespaces there: ${[...roles.keys()].join(', ') || 'none'}`,
          });
        namespaces = namespaces.filter((n) => wanted.includes(n));
      }
      const bases = new Map((await this.deps.state.list(connection.url)).map((b) => [`${b.kind}:${b.name}`, b]));
      const local = await this.deps.namespaces.localPrincipal();
      const rows: Row[] = [];
      if (namespaces.length > 0) {
        for (const kind of SYNC_KINDS) {
          const server = new Map((await remote.list(kind, namespaces)).map((e) => [e.name, e]));
          const mine = new Map((await this.localList(kind, namespaces, local)).map((e) => [e.name, e]));
          const names = [...new Set([...server.keys(), ...mine.keys()])].sort();
          for (const name of names) {
            const s = server.get(name);
            const l = mine.get(name);
            const base = bases.get(`${kind}:${name}`);
            const same = !!s && !!l && sameDefinition(kind, l.definition, s.definition);
            rows.push({
              local: l,
              server: s,
              base,
              status: {
                kind,
                name,
                namespace: namespaceOf(name),
                state: syncStateOf(l, s, base, same),
                localHash: l?.contentHash,
                localRevision: l?.revision,
                serverRevision: s?.revision,
                baseRevision: base?.revision,
              },
            });
          }
        }
      }
      return { connection, remote, roles, namespaces, rows };
    } catch (err) {
      await remote.close().catch(() => {});
      throw err;
    }
  }

  private async localList(kind: RegistryKind, namespaces: string[], principal: Principal): Promise<RegistryEntity[]> {
    const readable = new Set(await this.deps.namespaces.readable(principal));
    const out: RegistryEntity[] = [];
    for (const namespace of namespaces) {
      if (!readable.has(namespace)) continue;
      let pageToken: string | undefined;
      for (let pages = 0; pages < 1000; pages++) {
        const page = await this.deps.registry.list(kind, { namespace, pageSize: 500, pageToken }, principal);
        out.push(...page.items.filter((e) => !e.builtin));
        if (!page.nextPageToken) break;
        pageToken = page.nextPageToken;
      }
    }
    return out;
  }

  /** The local records of pulled namespaces, with the local user as owner (so they are readable and writable here). */
  private async ensureNamespaces(names: string[]): Promise<void> {
    const at = this.now().toISOString();
    for (const name of new Set(names)) {
      if (!(await this.deps.namespaceRepo.get(name))) await this.deps.namespaceRepo.create(name, DEFAULT_NAMESPACE, at);
      else if ((await this.deps.namespaceRepo.roleOf(name, DEFAULT_NAMESPACE)) !== 'owner')
        await this.deps.namespaceRepo.setMember(name, DEFAULT_NAMESPACE, 'owner', at);
    }
  }

  private async exists(path: string): Promise<boolean> {
    try {
      const facts = await this.deps.inspector.inspect(path);
      return facts.exists && facts.isDirectory;
    } catch {
      return false;
    }
  }
}

function isShared(namespace: string): boolean {
  return namespace !== DEFAULT_NAMESPACE && namespace !== BUILTIN_NAMESPACE;
}

function assertLocal(principal: Principal): void {
  if (principal.kind !== 'local') throw NOT_LOCAL();
}

/** Equal definitions, a resource's path aside (it is per machine). */
function sameDefinition(kind: RegistryKind, a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const strip = (d: Record<string, unknown>): unknown => {
    if (kind !== 'resource') return d;
    const { path: _path, ...rest } = d;
    return rest;
  };
  return canonical(strip(a)) === canonical(strip(b));
}

function canonical(v: unknown): string {
  const walk = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(walk)
      : x && typeof x === 'object'
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, walk((x as Record<string, unknown>)[k])]),
          )
        : x;
  return JSON.stringify(walk(v));
}

function conflictError(op: 'pull' | 'push', rows: Row[]): AppError {
  const list = rows
    .map(
      (r) =>
        `${r.status.kind} ${r.status.name} (local revision ${r.local?.revision ?? '-'}, server revision ${
          r.server?.revision ?? '-'
        }, last synced at server revision ${r.base?.revision ?? 'never'})`,
    )
    .join('; ');
  return new AppError('REVISION_CONFLICT', `${op} refused: changed on both sides: ${list}; nothing was written`, {
    details: {
      conflicts: rows.map((r) => ({
        kind: r.status.kind,
        name: r.status.name,
        localRevision: r.local?.revision ?? null,
        serverRevision: r.server?.revision ?? null,
        baseRevision: r.base?.revision ?? null,
      })),
    },
    hint:
      op === 'pull'
        ? 'keep the server version with `agents sync pull --force` (it overwrites the local one), or push yours with `agents sync push --force`'
        : 'keep yours with `agents sync push --force` (it overwrites the server version), or take the server one with `agents sync pull --force`',
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

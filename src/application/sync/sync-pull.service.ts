import { messageOf } from '../../domain/errors.ts';
import { DEFAULT_NAMESPACE } from '../../domain/registry/names.ts';
import type { Principal } from '../ports/principal.ts';
import type { RemoteEntity } from '../ports/sync.port.ts';
import { conflictError } from './sync.errors.ts';
import { emptyResult, type PullInput, type Row, type Snapshot, type SyncDeps, type SyncResult } from './sync.types.ts';

type PullDeps = Pick<SyncDeps, 'registry' | 'namespaces' | 'namespaceRepo' | 'inspector' | 'state' | 'connection'>;

/** Writes here what the server has newer: the rows behind, only on the server, or (forced) in conflict. */
export class SyncPull {
  private readonly deps: PullDeps;
  private readonly now: () => Date;

  constructor(deps: PullDeps, now: () => Date) {
    this.deps = deps;
    this.now = now;
  }

  async run(snap: Snapshot, input: PullInput): Promise<SyncResult> {
    const dryRun = input.dryRun === true;
    const conflicts = snap.rows.filter((r) => r.status.state === 'conflict');
    if (conflicts.length > 0 && input.force !== true) throw conflictError('pull', conflicts);
    const paths = { ...snap.connection.paths, ...input.map };
    const result = emptyResult(dryRun);
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
      if (kind === 'resource' && !(await this.placeResource(definition, name, paths, result))) continue;
      const action = row.local ? 'updated' : 'added';
      if (row.status.state === 'conflict')
        result.overwritten.push({ kind, name, localRevision: row.local?.revision, serverRevision: server.revision });
      if (dryRun) {
        result.written.push({ kind, name, action, revision: server.revision });
        continue;
      }
      await this.write(snap, row, server, definition, principal, result);
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

  /** The local records of pulled namespaces, with the local user as owner (so they are readable and writable here). */
  async ensureNamespaces(names: string[]): Promise<void> {
    const at = this.now().toISOString();
    for (const name of new Set(names)) {
      if (!(await this.deps.namespaceRepo.get(name))) await this.deps.namespaceRepo.create(name, DEFAULT_NAMESPACE, at);
      else if ((await this.deps.namespaceRepo.roleOf(name, DEFAULT_NAMESPACE)) !== 'owner')
        await this.deps.namespaceRepo.setMember(name, DEFAULT_NAMESPACE, 'owner', at);
    }
  }

  /**
   * A resource's path is per machine: the mapped one, else the server's, and it must be a
   * directory here. False (and the row skipped, with how to map it) when it is not.
   */
  private async placeResource(
    definition: Record<string, unknown>,
    name: string,
    paths: Record<string, string>,
    result: SyncResult,
  ): Promise<boolean> {
    const serverPath = typeof definition['path'] === 'string' ? definition['path'] : undefined;
    const mapped = paths[name];
    const path = mapped ?? serverPath;
    if (path === undefined || !(await this.exists(path))) {
      result.skipped.push({
        kind: 'resource',
        name,
        reason: mapped
          ? `the mapped path ${mapped} does not exist on this machine`
          : `its path ${serverPath ?? '(none)'} does not exist on this machine`,
        hint: `map it to a directory here: agents sync pull --map ${name}=/path/on/this/machine`,
      });
      return false;
    }
    definition['path'] = path;
    return true;
  }

  /** Writes one entity and its sync record; a failure is reported in the result, not thrown. */
  private async write(
    snap: Snapshot,
    row: Row,
    server: RemoteEntity,
    definition: Record<string, unknown>,
    principal: Principal,
    result: SyncResult,
  ): Promise<void> {
    const { kind, name } = row.status;
    const action = row.local ? 'updated' : 'added';
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

  private async exists(path: string): Promise<boolean> {
    try {
      const facts = await this.deps.inspector.inspect(path);
      return facts.exists && facts.isDirectory;
    } catch {
      return false;
    }
  }
}

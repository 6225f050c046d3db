import { messageOf } from '../../domain/errors.ts';
import type { Role } from '../../domain/permissions.ts';
import type { RegistryEntity } from '../../domain/registry/entities.ts';
import { conflictError } from './sync.errors.ts';
import { emptyResult, type Row, type Snapshot, type SyncDeps, type SyncInput, type SyncResult } from './sync.types.ts';

const WRITE_ROLES: ReadonlySet<Role> = new Set(['owner', 'admin', 'member']);

/** Writes to the server what changed here, in the namespaces where the user may write there. */
export class SyncPush {
  private readonly deps: Pick<SyncDeps, 'state'>;
  private readonly now: () => Date;

  constructor(deps: Pick<SyncDeps, 'state'>, now: () => Date) {
    this.deps = deps;
    this.now = now;
  }

  async run(snap: Snapshot, input: SyncInput): Promise<SyncResult> {
    const dryRun = input.dryRun === true;
    const candidates = snap.rows.filter((r) => ['ahead', 'local-only', 'conflict'].includes(r.status.state));
    const result = emptyResult(dryRun);
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
    if (conflicts.length > 0 && input.force !== true) throw conflictError('push', conflicts);
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
      await this.write(snap, row, local, definition, result);
    }
    return result;
  }

  /** Writes one entity to the server and its sync record; a failure is reported in the result, not thrown. */
  private async write(
    snap: Snapshot,
    row: Row,
    local: RegistryEntity,
    definition: Record<string, unknown>,
    result: SyncResult,
  ): Promise<void> {
    const { kind, name } = row.status;
    const action = row.server ? 'updated' : 'added';
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
        return;
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
}

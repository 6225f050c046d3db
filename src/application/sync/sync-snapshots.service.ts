import { AppError } from '../../domain/errors.ts';
import type { RegistryEntity, RegistryKind } from '../../domain/registry/entities.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import type { Principal } from '../ports/principal.ts';
import type { RemoteConnection, SyncRemote } from '../ports/sync.port.ts';
import { assertLocal, LOCAL_STAYS, NOT_CONNECTED } from './sync.errors.ts';
import { isShared, sameDefinition, SYNC_KINDS, syncStateOf } from './sync-state.ts';
import type { Row, Snapshot, SyncDeps } from './sync.types.ts';

/** Reads both sides of the user's shared namespaces and compares them, entity by entity. */
export class SyncSnapshots {
  private readonly deps: Pick<SyncDeps, 'registry' | 'namespaces' | 'state' | 'connection' | 'remotes'>;

  constructor(deps: Pick<SyncDeps, 'registry' | 'namespaces' | 'state' | 'connection' | 'remotes'>) {
    this.deps = deps;
  }

  /** Opens the server and compares; the caller closes `remote` (closed here only on failure). */
  async take(wanted: string[] | undefined, principal: Principal): Promise<Snapshot> {
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
      const rows = await this.rows(connection, remote, namespaces);
      return { connection, remote, roles, namespaces, rows };
    } catch (err) {
      await remote.close().catch(() => {});
      throw err;
    }
  }

  private async rows(connection: RemoteConnection, remote: SyncRemote, namespaces: string[]): Promise<Row[]> {
    const bases = new Map((await this.deps.state.list(connection.url)).map((b) => [`${b.kind}:${b.name}`, b]));
    const local = await this.deps.namespaces.localPrincipal();
    const rows: Row[] = [];
    if (namespaces.length === 0) return rows;
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
    return rows;
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
}

import type { RegistryKind } from '../../domain/registry/entities.ts';
import { BUILTIN_NAMESPACE, DEFAULT_NAMESPACE } from '../../domain/registry/names.ts';

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

/** Whether a namespace is one that syncs (never local/ or builtin/). */
export function isShared(namespace: string): boolean {
  return namespace !== DEFAULT_NAMESPACE && namespace !== BUILTIN_NAMESPACE;
}

/** Equal definitions, a resource's path aside (it is per machine). */
export function sameDefinition(kind: RegistryKind, a: Record<string, unknown>, b: Record<string, unknown>): boolean {
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

import type { Role } from '../../domain/permissions.ts';
import type { RegistryEntity, RegistryKind } from '../../domain/registry/entities.ts';
import type { Logger } from '../ports/logger.port.ts';
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
import type { SyncEntityStatus } from './sync-state.ts';

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

export type Ref = { kind: RegistryKind; name: string };
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

/** An empty result, for a pull or push to fill. */
export function emptyResult(dryRun: boolean): SyncResult {
  return { dryRun, written: [], overwritten: [], skipped: [], failed: [] };
}

/** One entity as both sides and the last sync record see it. */
export interface Row {
  status: SyncEntityStatus;
  local?: RegistryEntity | undefined;
  server?: RemoteEntity | undefined;
  base?: SyncBase | undefined;
}

/** What a status, pull or push works from: the server (open: the caller closes it) and every row. */
export interface Snapshot {
  connection: RemoteConnection;
  remote: SyncRemote;
  roles: Map<string, Role>;
  namespaces: string[];
  rows: Row[];
}

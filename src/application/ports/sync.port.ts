import type { Role } from '../../domain/permissions.ts';
import type { RegistryKind } from '../../domain/registry/entities.ts';

/** A definition as a server's registry holds it. */
export interface RemoteEntity {
  kind: RegistryKind;
  name: string;
  namespace: string;
  revision: number;
  contentHash: string;
  definition: Record<string, unknown>;
}

/** What an update with expectedRevision came to on the server. */
export type RemoteWriteResult =
  { ok: true; revision: number; contentHash: string } | { conflict: true; serverRevision: number };

/** The server a local agent syncs with, spoken to as an ordinary A2A client (its registry methods). */
export interface SyncRemote {
  /** Who the credential is on the server, and the namespaces the user belongs to there with their role. */
  whoami(): Promise<{ user: string; namespaces: Array<{ name: string; role: Role }> }>;
  /** Every entity of the kind in these namespaces (all pages). */
  list(kind: RegistryKind, namespaces: readonly string[]): Promise<RemoteEntity[]>;
  add(kind: RegistryKind, definition: Record<string, unknown>): Promise<RemoteWriteResult>;
  update(
    kind: RegistryKind,
    name: string,
    definition: Record<string, unknown>,
    expectedRevision: number | undefined,
  ): Promise<RemoteWriteResult>;
  close(): Promise<void>;
}

export type SyncRemoteFactory = (connection: { url: string; token: string }) => SyncRemote;

/** The server this local setup syncs with (kept beside the database, readable by its owner only). */
export interface RemoteConnection {
  url: string;
  token: string;
  /** The user the token authenticates as on the server. */
  user: string;
  /** Sync only this namespace (absent: every one the user belongs to). */
  namespace?: string | undefined;
  /** Pull every so many seconds while the local agent runs (0: never). */
  autoPullSeconds: number;
  lastPullAt?: string | undefined;
  /** Resource paths on this machine, by resource name (pulled resources use them instead of the server's). */
  paths?: Record<string, string> | undefined;
}

export interface RemoteConnectionStore {
  get(): Promise<RemoteConnection | undefined>;
  set(connection: RemoteConnection): Promise<void>;
  clear(): Promise<boolean>;
}

/** What both sides agreed on when an entity was last pulled or pushed. */
export interface SyncBase {
  kind: RegistryKind;
  name: string;
  /** The server's revision then. */
  revision: number;
  /** The server's content hash then. */
  contentHash: string;
  /** The local content hash then (differs from the server's for a resource mapped to a local path). */
  localHash: string;
  syncedAt: string;
}

/** The sync_state table: one base per (remote, kind, name). */
export interface SyncStateStore {
  list(remote: string): Promise<SyncBase[]>;
  put(remote: string, base: SyncBase): Promise<void>;
  clear(remote: string): Promise<number>;
}

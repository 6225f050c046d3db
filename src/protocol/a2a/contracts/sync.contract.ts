import { z } from 'zod';
import { REGISTRY_KINDS } from '../../../domain/registry/entities.ts';
import { EntityName, NamespaceName } from '../../../domain/registry/names.ts';
import { defineContract, type ContractFamily } from '../contract.ts';

const Role = z.enum(['owner', 'admin', 'member', 'viewer']);
const Kind = z.enum(REGISTRY_KINDS);
const Namespaces = z.array(NamespaceName).min(1, 'name at least one namespace').max(100).optional();
const ServerUrl = z
  .string()
  .max(2048)
  .regex(/^https?:\/\/\S+$/, 'must be an http:// or https:// URL, e.g. https://agents.example.com');
const Int = z.number().int();

const Connection = z.object({
  url: z.string(),
  user: z.string(),
  namespace: z.string().optional(),
  autoPullSeconds: Int,
  lastPullAt: z.string().optional(),
});

const SYNC_STATES = ['ahead', 'behind', 'conflict', 'in-sync', 'server-only', 'local-only'] as const;
const EntityStatus = z.object({
  kind: Kind,
  name: z.string(),
  namespace: z.string(),
  state: z.enum(SYNC_STATES),
  localHash: z.string().optional(),
  localRevision: Int.optional(),
  serverRevision: Int.optional(),
  baseRevision: Int.optional(),
});

const Ref = { kind: Kind, name: z.string() };
export const SyncResult = z.object({
  dryRun: z.boolean(),
  written: z.array(z.object({ ...Ref, action: z.enum(['added', 'updated']), revision: Int.optional() })),
  overwritten: z.array(z.object({ ...Ref, localRevision: Int.optional(), serverRevision: Int.optional() })),
  skipped: z.array(z.object({ ...Ref, reason: z.string(), hint: z.string().optional() })),
  failed: z.array(z.object({ ...Ref, message: z.string() })),
});

// Sync came with extension version 1.3 (teams). It runs in the local agent, which talks to the server.
export const syncConnect = defineContract({
  name: '_cleveragents/sync/connect',
  surface: 'extension',
  since: '1.3',
  summary:
    'Connect this local setup to a server (checked by asking it who the token is); sync then covers your namespaces there.',
  permission: 'account:self',
  scope: 'any',
  params: z
    .object({
      url: ServerUrl,
      token: z.string().min(1, 'is required').max(16_384, 'is at most 16 KiB'),
      namespace: NamespaceName.optional(),
      autoPullSeconds: Int.min(0, 'must be 0 (off) or more seconds')
        .max(7 * 24 * 3600, 'must be at most a week')
        .optional(),
    })
    .strict(),
  result: z.object({
    url: z.string(),
    user: z.string(),
    namespaces: z.array(z.object({ name: z.string(), role: Role })),
    autoPullSeconds: Int,
  }),
});

export const syncDisconnect = defineContract({
  name: '_cleveragents/sync/disconnect',
  surface: 'extension',
  since: '1.3',
  summary: 'Forget the server this local setup syncs with (what was pulled stays).',
  permission: 'account:self',
  scope: 'any',
  params: z.object({}).strict(),
  result: z.object({ disconnected: z.boolean(), url: z.string().optional() }),
});

export const syncConnection = defineContract({
  name: '_cleveragents/sync/connection',
  surface: 'extension',
  since: '1.3',
  summary: 'The server this local setup syncs with (without asking it), its auto-pull interval and resource paths.',
  permission: 'account:self',
  scope: 'any',
  params: z.object({}).strict(),
  result: z.object({
    connected: z.boolean(),
    url: z.string().optional(),
    user: z.string().optional(),
    namespace: z.string().optional(),
    autoPullSeconds: Int.optional(),
    lastPullAt: z.string().optional(),
    paths: z.record(z.string(), z.string()).optional(),
  }),
});

export const syncStatus = defineContract({
  name: '_cleveragents/sync/status',
  surface: 'extension',
  since: '1.3',
  summary:
    'Where each shared definition stands against the server: ahead, behind, conflict, in-sync, server-only or local-only.',
  permission: 'account:self',
  scope: 'any',
  params: z.object({ namespaces: Namespaces }).strict(),
  result: z.object({
    connection: Connection,
    namespaces: z.array(z.object({ name: z.string(), role: Role })),
    entities: z.array(EntityStatus),
  }),
});

export const syncPull = defineContract({
  name: '_cleveragents/sync/pull',
  surface: 'extension',
  since: '1.3',
  summary:
    "Write the server's newer definitions here; conflicts are refused (nothing changes) unless force, which reports what it overwrote; a resource whose path does not exist here is skipped unless mapped.",
  permission: 'account:self',
  scope: 'any',
  params: z
    .object({
      namespaces: Namespaces,
      force: z.boolean().optional(),
      dryRun: z.boolean().optional(),
      map: z.record(EntityName, z.string().min(1).max(4096).startsWith('/', 'must be an absolute path')).optional(),
    })
    .strict(),
  result: SyncResult,
});

export const syncPush = defineContract({
  name: '_cleveragents/sync/push',
  surface: 'extension',
  since: '1.3',
  summary:
    'Write what changed here to the server where your role allows; conflicts are refused (nothing changes) unless force, which reports what it overwrote. local/ never leaves the machine.',
  permission: 'account:self',
  scope: 'any',
  params: z.object({ namespaces: Namespaces, force: z.boolean().optional(), dryRun: z.boolean().optional() }).strict(),
  result: SyncResult,
});

/** The sync family: every row of sync.contract.ts, in the table's order. */
export const SYNC_METHODS = {
  syncConnect,
  syncDisconnect,
  syncConnection,
  syncStatus,
  syncPull,
  syncPush,
} as const satisfies ContractFamily;

import { z } from 'zod';
import { defineContract, type ContractFamily } from '../contract.ts';

const Role = z.enum(['owner', 'admin', 'member', 'viewer']);
const UserName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,62}$/, 'must be lowercase letters, digits, - and _, starting with a letter (at most 63)');
const KeyId = z.string().regex(/^(ca|st)_[a-z0-9]{12,16}$/, 'must be a key id as printed by agents key list');
const KeyName = z.string().min(1).max(100);
const Instant = z.iso.datetime({ offset: true });
/** An audit event's kind, e.g. auth.login, key.created (the list is in the audit port). */
const AuditEventKind = z.string().regex(/^[a-z]+\.[a-z-]+$/, 'must be an event kind such as auth.login or key.created');

const User = z.object({
  name: z.string(),
  displayName: z.string().optional(),
  admin: z.boolean(),
  defaultNamespace: z.string(),
  createdAt: z.string(),
  disabledAt: z.string().optional(),
  externalId: z.string().optional(),
});
const Key = z.object({
  id: z.string(),
  name: z.string(),
  user: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().optional(),
  revokedAt: z.string().optional(),
  lastUsedAt: z.string().optional(),
});
const NewKey = z.object({
  id: z.string(),
  /** The key itself: shown this once. */
  key: z.string(),
  name: z.string(),
  user: z.string(),
  expiresAt: z.string().optional(),
});

// Accounts came with extension version 1.3 (teams).
export const whoami = defineContract({
  name: '_cleveragents/whoami',
  surface: 'extension',
  since: '1.3',
  summary:
    'Who you are: your user, whether you are a server administrator, how you authenticated, where requests act and your namespaces with your role in each.',
  permission: 'account:self',
  params: z.object({}).strict(),
  result: z.object({
    user: z.string(),
    displayName: z.string().optional(),
    admin: z.boolean(),
    kind: z.enum(['local', 'key', 'jwt', 'system']),
    credential: z.string().optional(),
    defaultNamespace: z.string(),
    namespace: z.string(),
    namespaces: z.array(z.object({ name: z.string(), role: Role })),
  }),
});

export const userAdd = defineContract({
  name: '_cleveragents/user/add',
  surface: 'extension',
  since: '1.3',
  summary:
    'Add a user (server administrators): their own namespace is made with them, and a first API key, shown this once.',
  permission: 'server:admin',
  params: z
    .object({ name: UserName, displayName: z.string().min(1).max(200).optional(), admin: z.boolean().optional() })
    .strict(),
  result: z.object({ user: User, key: NewKey }),
});

export const userList = defineContract({
  name: '_cleveragents/user/list',
  surface: 'extension',
  since: '1.3',
  summary: 'The users of this server (server administrators).',
  permission: 'server:admin',
  params: z.object({}).strict(),
  result: z.object({ users: z.array(User) }),
});

export const userDisable = defineContract({
  name: '_cleveragents/user/disable',
  surface: 'extension',
  since: '1.3',
  summary:
    "Disable a user (server administrators): every one of the user's credentials is refused from the next request on.",
  permission: 'server:admin',
  params: z.object({ name: UserName }).strict(),
  result: User,
});

export const userEnable = defineContract({
  name: '_cleveragents/user/enable',
  surface: 'extension',
  since: '1.3',
  summary: 'Enable a disabled user again (server administrators).',
  permission: 'server:admin',
  params: z.object({ name: UserName }).strict(),
  result: User,
});

export const keyCreate = defineContract({
  name: '_cleveragents/key/create',
  surface: 'extension',
  since: '1.3',
  summary:
    'Make an API key (for yourself; server administrators also for others), optionally expiring; the key is shown this once.',
  permission: 'account:self',
  params: z
    .object({
      name: KeyName,
      expiresInDays: z.number().int().min(1).max(3650).optional(),
      expiresAt: Instant.optional(),
      user: UserName.optional(),
    })
    .strict(),
  result: NewKey,
});

export const keyList = defineContract({
  name: '_cleveragents/key/list',
  surface: 'extension',
  since: '1.3',
  summary: "Your API keys (server administrators: another user's), never their secrets.",
  permission: 'account:self',
  params: z.object({ user: UserName.optional() }).strict(),
  result: z.object({ keys: z.array(Key) }),
});

export const keyRevoke = defineContract({
  name: '_cleveragents/key/revoke',
  surface: 'extension',
  since: '1.3',
  summary: 'Revoke an API key (yours; server administrators: any): it is refused from the next request on.',
  permission: 'account:self',
  params: z.object({ id: KeyId }).strict(),
  result: Key,
});

export const auditList = defineContract({
  name: '_cleveragents/audit/list',
  surface: 'extension',
  since: '1.3',
  summary:
    'The audit log (server administrators), newest first: logins, refusals, users, keys, members; filtered and paged by `before`.',
  permission: 'server:admin',
  params: z
    .object({
      event: AuditEventKind.optional(),
      principal: z.string().min(1).max(200).optional(),
      namespace: z.string().min(1).max(200).optional(),
      since: Instant.optional(),
      before: z.string().min(1).max(64).optional(),
      limit: z.number().int().min(1).max(1000).optional(),
    })
    .strict(),
  result: z.object({
    events: z.array(
      z.object({
        id: z.string(),
        at: z.string(),
        event: z.string(),
        principal: z.string().optional(),
        credential: z.string().optional(),
        namespace: z.string().optional(),
        target: z.string().optional(),
        outcome: z.enum(['ok', 'refused']),
        details: z.record(z.string(), z.unknown()).optional(),
        client: z.string().optional(),
      }),
    ),
    next: z.string().optional(),
  }),
});

/** The account family: every row of account.contract.ts, in the table's order. */
export const ACCOUNT_METHODS = {
  whoami,
  userAdd,
  userList,
  userDisable,
  userEnable,
  keyCreate,
  keyList,
  keyRevoke,
  auditList,
} as const satisfies ContractFamily;

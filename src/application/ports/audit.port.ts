/** The security-relevant events the audit log keeps. */
export const AUDIT_EVENTS = [
  'auth.login',
  'auth.refused',
  /** A role a JWT's roles claim named in a namespace no claim may speak for (reserved, another user's). */
  'auth.role-dropped',
  'request.refused',
  'user.created',
  'user.disabled',
  'user.enabled',
  'key.created',
  'key.revoked',
  'namespace.created',
  'namespace.deleted',
  'member.added',
  'member.removed',
  'member.role-changed',
  'capability.granted',
  'capability.revoked',
  'capability.refused',
  /** A namespace's per-user limits (requests per minute, concurrent turns, tokens per day) changed. */
  'limits.changed',
  'secret.set',
  'secret.removed',
  /** A plan's changes applied to its projects (who, the plan, the commits and how many files). */
  'plan.applied',
  /** A registry entry (actor, tool, skill, resource, project, action, profile, hook) added, changed or removed. */
  'definition.added',
  'definition.updated',
  'definition.removed',
] as const;
export type AuditEventKind = (typeof AUDIT_EVENTS)[number];

export interface AuditEvent {
  /** A ULID: events sort by it. */
  id: string;
  at: string;
  event: AuditEventKind;
  /** Who did it (a user's name), when known. */
  principal?: string | undefined;
  /** Which credential (an API key's id, a JWT's hash), when known. */
  credential?: string | undefined;
  namespace?: string | undefined;
  /** What it was done to: a user, a key id, a method name. */
  target?: string | undefined;
  outcome: 'ok' | 'refused';
  details?: Record<string, unknown> | undefined;
  /** The client's address (HTTP), when known. */
  client?: string | undefined;
}

export interface AuditQuery {
  event?: AuditEventKind | undefined;
  principal?: string | undefined;
  namespace?: string | undefined;
  /** ISO instant: events at or after it. */
  since?: string | undefined;
  /** Events older than this id (paging, newest first). */
  before?: string | undefined;
  limit: number;
}

/** The persistent audit log. */
export interface AuditLog {
  append(event: AuditEvent): Promise<void>;
  /** Newest first. */
  list(q: AuditQuery): Promise<AuditEvent[]>;
  /** Drops events older than the instant; returns how many. */
  prune(olderThan: string): Promise<number>;
}

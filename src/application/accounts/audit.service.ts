import { AppError } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { AuditEvent, AuditEventKind, AuditLog, AuditQuery } from '../ports/audit.port.ts';
import type { Logger } from '../ports/logger.port.ts';
import type { Principal } from '../ports/principal.ts';

/** What a service says happened; the audit service stamps it with an id and the time. */
export type AuditEntry = Omit<AuditEvent, 'id' | 'at' | 'principal' | 'credential'> & {
  /** Who did it; its name and credential are recorded. */
  by?: Principal | undefined;
  /** Who, when there is no principal (a refused credential names a user at most). */
  principal?: string | undefined;
  credential?: string | undefined;
};

/** What a service needs of the audit log: to record what it did. */
export type AuditRecorder = Pick<AuditService, 'record'>;

export interface AuditListInput {
  event?: AuditEventKind | undefined;
  principal?: string | undefined;
  namespace?: string | undefined;
  since?: string | undefined;
  before?: string | undefined;
  limit?: number | undefined;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/**
 * The persistent audit log of security-relevant events: logins, keys made and revoked, role and
 * membership changes, refused requests. Recording never fails the request it describes (a
 * storage failure is logged); only server administrators list it.
 */
export class AuditService {
  private readonly log: AuditLog;
  private readonly logger: Logger;

  constructor(log: AuditLog, logger: Logger) {
    this.log = log;
    this.logger = logger;
  }

  /** Records an event; waits for the write but never throws. */
  async record(entry: AuditEntry): Promise<void> {
    const { by, ...rest } = entry;
    const event: AuditEvent = {
      ...rest,
      id: newId(),
      at: new Date().toISOString(),
      principal: by?.id ?? entry.principal,
      credential: by?.credential ?? entry.credential,
    };
    try {
      await this.log.append(event);
    } catch (err) {
      this.logger.error({ err, event: event.event }, 'writing the audit log failed');
    }
  }

  /** Newest first; only server administrators may read it. */
  async list(input: AuditListInput, principal: Principal): Promise<{ events: AuditEvent[]; next?: string }> {
    if (!principal.admin)
      throw new AppError('FORBIDDEN', 'Only server administrators may read the audit log', {
        hint: 'ask a server administrator (see `agents whoami`)',
      });
    const limit = Math.min(Math.max(input.limit ?? DEFAULT_LIMIT, 1), MAX_LIMIT);
    const q: AuditQuery = { ...input, limit: limit + 1 };
    const events = await this.log.list(q);
    const more = events.length > limit;
    const page = more ? events.slice(0, limit) : events;
    return more ? { events: page, next: page[page.length - 1]!.id } : { events: page };
  }

  /** Drops events older than the instant (retention). */
  prune(olderThan: string): Promise<number> {
    return this.log.prune(olderThan);
  }
}

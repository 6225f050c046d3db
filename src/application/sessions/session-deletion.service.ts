import type { Principal } from '../ports/principal.ts';
import type { SessionService } from './session.service.ts';
import type { TurnHistoryService } from './turn-history.service.ts';

/** What deleting a session needs of the tasks: its context's tasks cancelled and deleted. */
export interface ContextPurger {
  /** Cancels what runs in the context and deletes its tasks; returns how many were deleted. */
  purgeContext(contextId: string): Promise<number>;
}

/** Deletes a session with its tasks (running ones are cancelled first) and its turns' undo history. */
export class SessionDeletion {
  private readonly deps: {
    sessions: Pick<SessionService, 'get' | 'delete'>;
    tasks: ContextPurger;
    turnHistory: Pick<TurnHistoryService, 'forget'>;
  };

  constructor(deps: SessionDeletion['deps']) {
    this.deps = deps;
  }

  /** NOT_FOUND for a session that is not the caller's. */
  async delete(ref: string, principal: Principal): Promise<{ deleted: true; tasksDeleted: number }> {
    const { id } = await this.deps.sessions.get(ref, principal);
    const tasksDeleted = await this.deps.tasks.purgeContext(id);
    await this.deps.turnHistory.forget(id);
    await this.deps.sessions.delete(id);
    return { deleted: true, tasksDeleted };
  }
}

import type { TaskState } from '../../domain/a2a.model.ts';
import { AppError } from '../../domain/errors.ts';
import type { Principal } from '../ports/principal.ts';

export function taskNotFound(id: string): AppError {
  return new AppError('TASK_NOT_FOUND', `Task ${id} was not found`, {
    details: { taskId: id },
    hint: 'list your tasks with ListTasks (agents task list)',
  });
}

/** Another principal's task is indistinguishable from a missing one. */
export function assertOwner(owner: string, principal: Principal, id: string): void {
  if (owner !== principal.namespace) throw taskNotFound(id);
}

export function messageIdReused(messageId: string): AppError {
  return new AppError(
    'INVALID_PARAMS',
    `messageId ${messageId} was already used with different content; a retry must resend the same message, a new message needs a new messageId`,
    {
      fields: [
        {
          field: 'message.messageId',
          description: 'already used for a message with different parts, metadata, contextId or taskId',
        },
      ],
      details: { messageId },
    },
  );
}

/** Another send stored the same message key first (the key's unique index refused this one). */
export function isMessageKeyTaken(err: unknown): boolean {
  return err instanceof AppError && err.reason === 'ALREADY_EXISTS' && typeof err.details['messageId'] === 'string';
}

/** A storage failure the store has already logged, with the correlation id its callers get. */
export function isReported(err: unknown): boolean {
  return err instanceof AppError && err.reason === 'UNAVAILABLE' && typeof err.details['correlationId'] === 'string';
}

/** A task state in words for messages: TASK_STATE_INPUT_REQUIRED → "input-required". */
export function stateWord(s: TaskState): string {
  return s.replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

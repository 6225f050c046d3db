/**
 * Domain and application errors carry a reason, never a wire code; the protocol layer maps each
 * reason to JSON-RPC codes, CLI exit codes and HTTP statuses through total tables.
 */
export const ERROR_REASONS = [
  'NOT_FOUND',
  'TASK_NOT_FOUND',
  'TASK_NOT_CANCELABLE',
  'PUSH_NOT_SUPPORTED',
  'UNSUPPORTED_OPERATION',
  'CONTENT_TYPE_NOT_SUPPORTED',
  'INVALID_AGENT_RESPONSE',
  'EXTENDED_CARD_NOT_CONFIGURED',
  'EXTENSION_REQUIRED',
  'VERSION_NOT_SUPPORTED',
  'INVALID_PARAMS',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'INVALID_STATE',
  'ALREADY_EXISTS',
  'REVISION_CONFLICT',
  'IN_USE',
  'BUDGET_EXCEEDED',
  'VERSION_MISMATCH',
  'PLAN_ERROR',
  'UNAVAILABLE',
  'INTERNAL',
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

export interface FieldViolation {
  field: string;
  description: string;
  /** Where the field is written, when it came from a file. */
  file?: string;
  line?: number;
}

/** The error class name a client sees in `error.data.type`, per reason. */
export const ERROR_TYPE_NAMES: Record<ErrorReason, string> = {
  NOT_FOUND: 'ResourceNotFoundError',
  TASK_NOT_FOUND: 'TaskNotFoundError',
  TASK_NOT_CANCELABLE: 'TaskNotCancelableError',
  PUSH_NOT_SUPPORTED: 'PushNotificationNotSupportedError',
  UNSUPPORTED_OPERATION: 'UnsupportedOperationError',
  CONTENT_TYPE_NOT_SUPPORTED: 'ContentTypeNotSupportedError',
  INVALID_AGENT_RESPONSE: 'InvalidAgentResponseError',
  EXTENDED_CARD_NOT_CONFIGURED: 'ExtendedAgentCardNotConfiguredError',
  EXTENSION_REQUIRED: 'ExtensionSupportRequiredError',
  VERSION_NOT_SUPPORTED: 'VersionNotSupportedError',
  INVALID_PARAMS: 'ValidationError',
  UNAUTHENTICATED: 'AuthenticationError',
  FORBIDDEN: 'AuthorizationError',
  INVALID_STATE: 'BusinessRuleViolation',
  ALREADY_EXISTS: 'DuplicateEntityError',
  REVISION_CONFLICT: 'RevisionConflictError',
  IN_USE: 'EntityInUseError',
  BUDGET_EXCEEDED: 'BudgetExceededError',
  VERSION_MISMATCH: 'A2aVersionMismatchError',
  PLAN_ERROR: 'PlanError',
  UNAVAILABLE: 'ServiceUnavailableError',
  INTERNAL: 'InternalError',
};

export interface AppErrorOptions {
  details?: Record<string, unknown>;
  hint?: string | undefined;
  fields?: FieldViolation[];
  cause?: unknown;
}

/** The one error type the inner layers throw. `message` is safe to show to a client. */
export class AppError extends Error {
  readonly reason: ErrorReason;
  readonly details: Record<string, unknown>;
  readonly hint: string | undefined;
  readonly fields: FieldViolation[];

  constructor(reason: ErrorReason, message: string, opts: AppErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = ERROR_TYPE_NAMES[reason];
    this.reason = reason;
    this.details = opts.details ?? {};
    this.hint = opts.hint;
    this.fields = opts.fields ?? [];
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** What went wrong, in words, whatever was thrown (an Error's message; anything else as a string). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

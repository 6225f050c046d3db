import { A2AClientError, A2ATransportError } from '../../protocol/client/index.js';

/**
 * Why a command ended, and the process exit code for each reason: the one total table of the
 * CLI. A new reason without a code does not compile.
 */
export type ExitReason =
  | 'OK'
  | 'INTERNAL'
  | 'USAGE'
  | 'NOT_FOUND'
  | 'AUTH'
  | 'INVALID_STATE'
  | 'UNREACHABLE'
  | 'INVALID_PARAMS'
  | 'VERSION_NOT_SUPPORTED'
  | 'TASK_UNSUCCESSFUL'
  | 'PLAN_ERROR'
  | 'BUDGET_EXCEEDED'
  | 'INTERRUPTED';

export const EXIT_CODES: Record<ExitReason, number> = {
  OK: 0,
  /** An internal error of the agent, or anything unexpected; also a degraded health or a failed diagnostic. */
  INTERNAL: 1,
  /** Bad flags or arguments (commander's errors), or an unreadable config file. */
  USAGE: 2,
  /** TaskNotFoundError, ResourceNotFoundError. */
  NOT_FOUND: 3,
  /** AuthenticationError, AuthorizationError, HTTP 401/403. */
  AUTH: 4,
  /** TaskNotCancelableError, UnsupportedOperationError, BusinessRuleViolation, RevisionConflictError, EntityInUseError, DuplicateEntityError, …: the request cannot be served now. */
  INVALID_STATE: 5,
  /** The agent could not be started or reached (A2ATransportError). */
  UNREACHABLE: 6,
  /** ValidationError / -32602: the agent refused the parameters. */
  INVALID_PARAMS: 7,
  /** VersionNotSupportedError: the agent does not speak our protocol version. */
  VERSION_NOT_SUPPORTED: 8,
  /** `send` / `task watch` / `chat`: the task ended failed, rejected or canceled. */
  TASK_UNSUCCESSFUL: 9,
  /** PlanError: a plan could not go on (a conflict or dirty files at apply, …); the files are listed. */
  PLAN_ERROR: 10,
  /** BudgetExceededError: a plan used up its tool calls or wall time (what it did so far is kept). */
  BUDGET_EXCEEDED: 11,
  /** Ctrl-C (128 + SIGINT). */
  INTERRUPTED: 130,
};

/** The agent's error types (`error.data.type`) and the exit reason of each. */
const BY_ERROR_TYPE: Record<string, ExitReason> = {
  TaskNotFoundError: 'NOT_FOUND',
  ResourceNotFoundError: 'NOT_FOUND',
  AuthenticationError: 'AUTH',
  AuthorizationError: 'AUTH',
  TaskNotCancelableError: 'INVALID_STATE',
  UnsupportedOperationError: 'INVALID_STATE',
  BusinessRuleViolation: 'INVALID_STATE',
  PushNotificationNotSupportedError: 'INVALID_STATE',
  ExtendedAgentCardNotConfiguredError: 'INVALID_STATE',
  DuplicateEntityError: 'INVALID_STATE',
  RevisionConflictError: 'INVALID_STATE',
  EntityInUseError: 'INVALID_STATE',
  PlanError: 'PLAN_ERROR',
  BudgetExceededError: 'BUDGET_EXCEEDED',
  MethodNotFoundError: 'INVALID_STATE',
  ValidationError: 'INVALID_PARAMS',
  ContentTypeNotSupportedError: 'INVALID_PARAMS',
  VersionNotSupportedError: 'VERSION_NOT_SUPPORTED',
  A2aVersionMismatchError: 'VERSION_NOT_SUPPORTED',
  ExtensionSupportRequiredError: 'VERSION_NOT_SUPPORTED',
};

const INVALID_PARAMS_CODE = -32602;
const METHOD_NOT_FOUND_CODE = -32601;

/** The exit reason for an error thrown by a command. */
export function exitReasonOf(err: unknown): ExitReason {
  if (err instanceof A2ATransportError) return 'UNREACHABLE';
  if (err instanceof A2AClientError) {
    const byType = BY_ERROR_TYPE[err.type];
    if (byType) return byType;
    if (err.httpStatus === 401 || err.httpStatus === 403) return 'AUTH';
    if (err.code === INVALID_PARAMS_CODE) return 'INVALID_PARAMS';
    if (err.code === METHOD_NOT_FOUND_CODE) return 'INVALID_STATE';
    return 'INTERNAL';
  }
  if (err instanceof UsageError) return 'USAGE';
  if (err instanceof CliError) return err.reason;
  return 'INTERNAL';
}

/** A mistake in how the CLI was called that only shows after parsing (e.g. a bad config file). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A failure the CLI itself finds in what the agent answered (a plan waiting for an approval that
 * cannot be given here, a plan run that ended with a plan error): reported like an agent error.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly reason: ExitReason,
    readonly type: string,
    readonly hint?: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = type;
  }
}

import { A2AClientError, A2ATransportError, type WireReason } from '../../protocol/client/index.ts';

/**
 * Why a command ended, and the process exit code of each: with {@link BY_WIRE_REASON} (every
 * reason an agent's error may name → one of these), a new reason without a code does not compile.
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

/**
 * The exit reason of each reason an agent's error may name (`error.data.reason`): total, so a
 * new reason on the wire without an exit reason here does not compile.
 */
const BY_WIRE_REASON: Record<WireReason, ExitReason> = {
  NOT_FOUND: 'NOT_FOUND',
  TASK_NOT_FOUND: 'NOT_FOUND',
  UNAUTHENTICATED: 'AUTH',
  FORBIDDEN: 'AUTH',
  TASK_NOT_CANCELABLE: 'INVALID_STATE',
  UNSUPPORTED_OPERATION: 'INVALID_STATE',
  INVALID_STATE: 'INVALID_STATE',
  PUSH_NOT_SUPPORTED: 'INVALID_STATE',
  EXTENDED_CARD_NOT_CONFIGURED: 'INVALID_STATE',
  ALREADY_EXISTS: 'INVALID_STATE',
  REVISION_CONFLICT: 'INVALID_STATE',
  IN_USE: 'INVALID_STATE',
  METHOD_NOT_FOUND: 'INVALID_STATE',
  PLAN_ERROR: 'PLAN_ERROR',
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  INVALID_PARAMS: 'INVALID_PARAMS',
  CONTENT_TYPE_NOT_SUPPORTED: 'INVALID_PARAMS',
  VERSION_NOT_SUPPORTED: 'VERSION_NOT_SUPPORTED',
  VERSION_MISMATCH: 'VERSION_NOT_SUPPORTED',
  EXTENSION_REQUIRED: 'VERSION_NOT_SUPPORTED',
  INVALID_AGENT_RESPONSE: 'INTERNAL',
  UNAVAILABLE: 'INTERNAL',
  INTERNAL: 'INTERNAL',
  PARSE_ERROR: 'INTERNAL',
  INVALID_REQUEST: 'INTERNAL',
};

const isWireReason = (r: string | undefined): r is WireReason => r !== undefined && Object.hasOwn(BY_WIRE_REASON, r);

const INVALID_PARAMS_CODE = -32602;
const METHOD_NOT_FOUND_CODE = -32601;

/** The exit reason for an error thrown by a command. */
export function exitReasonOf(err: unknown): ExitReason {
  if (err instanceof A2ATransportError) return 'UNREACHABLE';
  if (err instanceof A2AClientError) {
    if (isWireReason(err.reason)) return BY_WIRE_REASON[err.reason];
    // An answer that names no reason we know (another agent, a proxy): judged by status and code.
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
  readonly hint?: string | undefined;
  /** Already written to the log by the server (its stderr is JSON lines): not printed a second time. */
  logged = false;

  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
    this.name = 'UsageError';
  }
}

/**
 * A failure the CLI itself finds in what the agent answered (a plan waiting for an approval that
 * cannot be given here, a plan run that ended with a plan error): reported like an agent error.
 */
export class CliError extends Error {
  readonly reason: ExitReason;
  readonly type: string;
  readonly hint?: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(message: string, reason: ExitReason, type: string, hint?: string, details: Record<string, unknown> = {}) {
    super(message);
    this.reason = reason;
    this.type = type;
    this.hint = hint;
    this.details = details;
    this.name = type;
  }
}

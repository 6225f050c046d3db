import { RequestError } from '@agentclientprotocol/sdk';
import { exitReasonOf, type ExitReason } from '../cli/exit-codes.ts';
import { reportOf, type Target } from '../cli/render/error.render.ts';

/** ACP's codes for what the CLI tells apart by exit reason (the rest is an internal error). */
const ACP_CODES: Partial<Record<ExitReason, number>> = {
  NOT_FOUND: -32002,
  AUTH: -32000,
  INVALID_PARAMS: -32602,
};

/**
 * A failure of the backend (an A2A error, a dead agent) as the ACP error an editor shows: the
 * agent's message, and in `data` its type, reason, hint and correlation id, as the CLI reports them.
 */
export function toRequestError(err: unknown, target: Target): RequestError {
  if (err instanceof RequestError) return err;
  const reason = exitReasonOf(err);
  const report = reportOf(err, reason, target);
  const data: Record<string, unknown> = { type: report.type };
  if (report.reason) data['reason'] = report.reason;
  if (report.hint) data['hint'] = report.hint;
  if (report.correlationId) data['correlationId'] = report.correlationId;
  if (report.fields) data['fields'] = report.fields;
  const message =
    reason === 'UNREACHABLE' ? `the CleverAgents backend is not reachable: ${report.message}` : report.message;
  return new RequestError(ACP_CODES[reason] ?? -32603, message, data);
}

/** The ACP error for a turn that failed: its message, and the hint, kind and task when known. */
export function turnFailed(
  end: { message: string; hint?: string; errorKind?: string },
  taskId: string | undefined,
): RequestError {
  return new RequestError(-32603, end.message, {
    ...(end.hint ? { hint: end.hint } : {}),
    ...(end.errorKind ? { kind: end.errorKind } : {}),
    ...(taskId ? { taskId } : {}),
  });
}

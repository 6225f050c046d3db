import { A2AClientError, A2ATransportError, type FieldViolationInfo } from '../../../protocol/client/index.js';
import { UsageError, type ExitReason } from '../exit-codes.js';
import type { Palette } from './colors.js';

/** An error as the CLI reports it: in the envelope's data, and on stderr for people. */
export interface ErrorReport {
  message: string;
  type: string;
  code?: number;
  reason?: string;
  hint?: string;
  correlationId?: string;
  fields?: FieldViolationInfo[];
  httpStatus?: number;
}

/** Where the CLI was talking to, for hints about unreachable agents. */
export type Target = { kind: 'local' } | { kind: 'server'; url: string };

/** What to suggest when the agent gave no hint of its own. */
function fallbackHint(reason: ExitReason, target: Target): string | undefined {
  switch (reason) {
    case 'UNREACHABLE':
      return target.kind === 'server'
        ? `check that a server runs at ${target.url} (agents serve) and that the URL is right`
        : 'the local agent could not be started or stopped answering; run again with --verbose to see its log';
    case 'AUTH':
      return 'pass the server token with --token, CLEVERAGENTS_SERVER_TOKEN or the config file';
    default:
      return undefined;
  }
}

export function reportOf(err: unknown, reason: ExitReason, target: Target): ErrorReport {
  let r: ErrorReport;
  if (err instanceof A2AClientError) {
    r = { message: err.message, type: err.type, code: err.code };
    if (err.reason) r.reason = err.reason;
    if (err.hint) r.hint = err.hint;
    if (err.correlationId) r.correlationId = err.correlationId;
    if (err.fieldViolations.length > 0) r.fields = err.fieldViolations;
    if (err.httpStatus !== undefined && err.httpStatus >= 400) r.httpStatus = err.httpStatus;
  } else if (err instanceof A2ATransportError) {
    r = { message: err.message, type: 'TransportError' };
  } else if (err instanceof UsageError) {
    r = { message: err.message, type: 'UsageError' };
    if (err.hint) r.hint = err.hint;
  } else if (reason === 'INTERRUPTED') {
    r = { message: 'interrupted', type: 'Interrupted' };
  } else {
    r = { message: err instanceof Error ? err.message : String(err), type: err instanceof Error ? err.name : 'Error' };
  }
  if (r.hint === undefined) {
    const hint = fallbackHint(reason, target);
    if (hint) r.hint = hint;
  }
  return r;
}

/**
 * The error for people, on stderr: the reason, the fields concerned, the hint, and — for internal
 * errors, where it is what an operator needs — the correlation id.
 */
export function renderError(r: ErrorReport, reason: ExitReason, mode: { rich: boolean; pal: Palette }): string {
  const { pal } = mode;
  if (reason === 'INTERRUPTED') return `${mode.rich ? pal.yellow('interrupted') : 'interrupted'}\n`;
  const lines: string[] = [];
  const kind = r.type !== 'Error' && r.type !== 'UsageError' && r.type !== 'Interrupted' ? ` (${r.type})` : '';
  lines.push(mode.rich ? `${pal.red(pal.bold('error'))} ${r.message}${kind && pal.dim(kind)}` : `error: ${r.message}${kind}`);
  for (const f of r.fields ?? []) lines.push(mode.rich ? `  ${pal.yellow(f.field)}: ${f.description}` : `field: ${f.field}: ${f.description}`);
  if (r.hint) lines.push(mode.rich ? `  ${pal.cyan('hint')}: ${r.hint}` : `hint: ${r.hint}`);
  if (r.correlationId && reason === 'INTERNAL') lines.push(mode.rich ? `  ${pal.dim(`correlation id: ${r.correlationId}`)}` : `correlation-id: ${r.correlationId}`);
  return `${lines.join('\n')}\n`;
}

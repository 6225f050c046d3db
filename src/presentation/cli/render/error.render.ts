import { A2AClientError, A2ATransportError, type FieldViolationInfo } from '../../../protocol/client/index.ts';
import { CliError, UsageError, type ExitReason } from '../exit-codes.ts';
import type { Palette } from './colors.ts';

/** An error as the CLI reports it: in the envelope's data, and on stderr for people. */
export interface ErrorReport {
  message: string;
  type: string;
  code?: number;
  reason?: string;
  hint?: string;
  correlationId?: string;
  fields?: FieldProblem[];
  httpStatus?: number;
  /** What else the agent said about the error (referrers, files, phase/state, …). */
  details?: Record<string, unknown>;
}

/** A field violation; definition files add where the field is written. */
export type FieldProblem = FieldViolationInfo & { file?: string; line?: number };

/** Keys of `error.data` that the report has fields of its own for. */
const KNOWN_DATA_KEYS = new Set(['type', 'reason', 'correlationId', 'hint', 'fieldViolations']);

/**
 * Where the CLI was talking to, for hints about unreachable agents; `login`: the server is the one
 * `agents login` made current (every command goes there until the user says otherwise).
 */
export type Target = { kind: 'local' } | { kind: 'server'; url: string; login?: boolean };

/** What to suggest when the agent gave no hint of its own. */
function fallbackHint(reason: ExitReason, target: Target): string | undefined {
  switch (reason) {
    case 'UNREACHABLE':
      if (target.kind === 'local')
        return 'the local agent could not be started or stopped answering; run again with --verbose to see its log';
      return `check that a server runs at ${target.url} (agents serve) and that the URL is right${
        target.login
          ? `; or work without it: add --local to use a local agent, or forget the login with agents logout --server ${target.url}`
          : ''
      }`;
    case 'AUTH':
      return 'pass the server token with --token, CLEVERAGENTS_SERVER_TOKEN or the config file';
    default:
      return undefined;
  }
}

/** `--server` given a path the server does not serve JSON-RPC at: its base URL is what works. */
function baseUrlHint(url: string): string {
  try {
    return `pass the server's base URL: --server ${new URL(url).origin}`;
  } catch {
    return "pass the server's base URL with --server";
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
    if (typeof err.data === 'object' && err.data !== null && !Array.isArray(err.data)) {
      const details = Object.fromEntries(
        Object.entries(err.data as Record<string, unknown>).filter(([k]) => !KNOWN_DATA_KEYS.has(k)),
      );
      if (Object.keys(details).length > 0) r.details = details;
    }
  } else if (err instanceof CliError) {
    r = { message: err.message, type: err.type };
    if (err.hint) r.hint = err.hint;
    if (Object.keys(err.details).length > 0) r.details = err.details;
  } else if (err instanceof A2ATransportError) {
    r = { message: err.message, type: 'TransportError' };
    if (err.hint) r.hint = target.kind === 'server' ? `${err.hint}; ${baseUrlHint(target.url)}` : err.hint;
  } else if (err instanceof UsageError) {
    r = { message: err.message, type: err.name === 'StartupError' ? 'StartupError' : 'UsageError' };
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
  const interrupted = mode.rich ? pal.yellow('interrupted') : 'interrupted';
  // A command that knows what its Ctrl-C left behind says so, with how to go on.
  if (reason === 'INTERRUPTED' && r.type === 'PlanInterrupted')
    return `${interrupted}: ${r.message}\n${mode.rich ? `  ${pal.cyan('hint')}` : 'hint'}: ${r.hint ?? ''}\n`;
  if (reason === 'INTERRUPTED') return `${interrupted}\n`;
  const lines: string[] = [];
  const kind =
    r.type !== 'Error' && r.type !== 'UsageError' && r.type !== 'StartupError' && r.type !== 'Interrupted'
      ? ` (${r.type})`
      : '';
  const isFile = (f: FieldProblem): boolean => f.file !== undefined && !f.file.startsWith('<');
  const located = (r.fields ?? []).some((f) => f.file !== undefined);
  // A definition file's problems are listed one per line below: the message's own copy is cut.
  const message = located ? (r.message.split('\n')[0] ?? r.message).replace(/:$/, '') : r.message;
  lines.push(
    mode.rich ? `${pal.red(pal.bold('error'))} ${message}${kind && pal.dim(kind)}` : `error: ${message}${kind}`,
  );
  for (const f of r.fields ?? []) {
    if (isFile(f)) {
      const where = `${f.file}${f.line !== undefined ? `:${f.line}` : ''}`;
      lines.push(
        mode.rich
          ? `  ${pal.dim(`${where}:`)} ${pal.yellow(f.field)}: ${f.description}`
          : `${where}: ${f.field}: ${f.description}`,
      );
    } else {
      lines.push(mode.rich ? `  ${pal.yellow(f.field)}: ${f.description}` : `field: ${f.field}: ${f.description}`);
    }
  }
  for (const [k, v] of detailLines(r.details)) lines.push(mode.rich ? `  ${pal.dim(`${k}:`)} ${v}` : `${k}: ${v}`);
  if (r.hint) lines.push(mode.rich ? `  ${pal.cyan('hint')}: ${r.hint}` : `hint: ${r.hint}`);
  if (r.correlationId && reason === 'INTERNAL')
    lines.push(mode.rich ? `  ${pal.dim(`correlation id: ${r.correlationId}`)}` : `correlation-id: ${r.correlationId}`);
  return `${lines.join('\n')}\n`;
}

/** The details people need to act on an error: who refers to an entity, which files, the plan's phase and state. */
function detailLines(d: Record<string, unknown> | undefined): Array<[string, string]> {
  if (!d) return [];
  const out: Array<[string, string]> = [];
  const referrers = d['referrers'];
  if (Array.isArray(referrers)) {
    for (const ref of referrers as Array<{ kind?: unknown; name?: unknown }>)
      out.push(['used by', `${String(ref.kind)} ${String(ref.name)}`]);
  }
  const files = d['files'];
  if (Array.isArray(files)) for (const f of files) out.push(['file', String(f)]);
  if (typeof d['phase'] === 'string') out.push(['phase', d['phase']]);
  if (typeof d['state'] === 'string') out.push(['state', d['state']]);
  if (typeof d['waiting'] === 'string') out.push(['waiting for', d['waiting']]);
  if (Array.isArray(d['allowed']))
    out.push(['allowed', (d['allowed'] as unknown[]).length ? (d['allowed'] as unknown[]).join(', ') : 'nothing']);
  if (typeof d['expectedRevision'] === 'number' && typeof d['revision'] === 'number')
    out.push(['revision', `${d['revision']} (you expected ${d['expectedRevision']})`]);
  return out;
}

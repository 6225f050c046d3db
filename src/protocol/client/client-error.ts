import type { JsonRpcErrorObject } from '../jsonrpc/envelope.ts';

export interface FieldViolationInfo {
  field: string;
  description: string;
}

/**
 * An error answer from the agent, with what it said about itself: the JSON-RPC code, the error
 * type (`error.data.type`, or the v1.0 ErrorInfo detail's), a hint and the correlation id.
 */
export class A2AClientError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly type: string;
  readonly reason: string | undefined;
  readonly hint: string | undefined;
  readonly correlationId: string | undefined;
  readonly fieldViolations: FieldViolationInfo[];
  /** HTTP status when the error came with one (401, 413, …). */
  readonly httpStatus: number | undefined;

  constructor(error: JsonRpcErrorObject, httpStatus?: number) {
    super(error.message);
    this.name = 'A2AClientError';
    this.code = error.code;
    this.data = error.data;
    this.httpStatus = httpStatus;
    const info = readInfo(error.data);
    this.type = info.type ?? 'Error';
    this.reason = info.reason;
    this.hint = info.hint;
    this.correlationId = info.correlationId;
    this.fieldViolations = info.fields;
  }
}

/** A failure of the connection itself (agent exited, server unreachable, malformed reply). */
export class A2ATransportError extends Error {
  /** What the server said to do about it, when it answered with a hint (a 404 names the real endpoint). */
  readonly hint: string | undefined;

  constructor(message: string, options?: { cause?: unknown; hint?: string | undefined }) {
    super(message, options);
    this.name = 'A2ATransportError';
    this.hint = options?.hint;
  }
}

function readInfo(data: unknown): {
  type: string | undefined;
  reason: string | undefined;
  hint: string | undefined;
  correlationId: string | undefined;
  fields: FieldViolationInfo[];
} {
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  if (Array.isArray(data)) {
    const info = data.find(
      (d) =>
        typeof d === 'object' && d !== null && String((d as Record<string, unknown>)['@type']).endsWith('ErrorInfo'),
    ) as Record<string, unknown> | undefined;
    const bad = data.find(
      (d) =>
        typeof d === 'object' && d !== null && String((d as Record<string, unknown>)['@type']).endsWith('BadRequest'),
    ) as Record<string, unknown> | undefined;
    const meta = (info?.['metadata'] ?? {}) as Record<string, unknown>;
    return {
      type: str(meta['type']),
      reason: str(info?.['reason']),
      hint: str(meta['hint']),
      correlationId: str(meta['correlationId']),
      fields: Array.isArray(bad?.['fieldViolations']) ? (bad['fieldViolations'] as FieldViolationInfo[]) : [],
    };
  }
  if (typeof data === 'object' && data !== null) {
    const d = data as Record<string, unknown>;
    return {
      type: str(d['type']),
      reason: str(d['reason']),
      hint: str(d['hint']),
      correlationId: str(d['correlationId']),
      fields: Array.isArray(d['fieldViolations']) ? (d['fieldViolations'] as FieldViolationInfo[]) : [],
    };
  }
  return { type: undefined, reason: undefined, hint: undefined, correlationId: undefined, fields: [] };
}

import { randomUUID } from 'node:crypto';
import { AppError, ERROR_TYPE_NAMES, isAppError, type ErrorReason, type FieldViolation } from '../../domain/errors.ts';
import { A2A_CODES, EXTENSION_CODES, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR } from './codes.ts';
import type { JsonRpcErrorObject } from './envelope.ts';

/** Which error format applies: A2A v1.0 (data is an array of typed details), v0.3, or our extensions. */
export type ErrorSurface = 'a2a-v1' | 'a2a-v03' | 'extension';

/** Errors raised by the JSON-RPC machinery itself, before a method runs. */
export class RpcError extends Error {
  readonly code: number;
  readonly type: string;
  readonly hint?: string | undefined;

  constructor(code: number, message: string, type: string, hint?: string) {
    super(message);
    this.code = code;
    this.type = type;
    this.hint = hint;
  }
}

export const parseError = (detail: string): RpcError =>
  new RpcError(
    PARSE_ERROR,
    `Invalid JSON payload: ${detail}`,
    'JSONParseError',
    'send one JSON-RPC 2.0 request object as UTF-8 JSON',
  );
export const invalidRequest = (detail: string): RpcError =>
  new RpcError(
    INVALID_REQUEST,
    `Invalid request: ${detail}`,
    'InvalidRequestError',
    'a request is {"jsonrpc":"2.0","id":1,"method":"…","params":{…}}',
  );
export const methodNotFound = (method: string, hint?: string): RpcError =>
  new RpcError(
    METHOD_NOT_FOUND,
    `Method not found: ${method}`,
    'MethodNotFoundError',
    hint ?? 'the Agent Card lists the methods this server serves',
  );

export const newCorrelationId = (): string => randomUUID();

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

/**
 * The one place that turns a thrown error into a JSON-RPC error object. Unknown errors become
 * -32603 with only the correlation id: their text (SQL, stack) stays in the log.
 */
export function toErrorObject(err: unknown, surface: ErrorSurface, correlationId: string): JsonRpcErrorObject {
  if (err instanceof RpcError) {
    return build(err.code, err.message, err.type, reasonOfRpc(err.code), surface, correlationId, {}, err.hint, []);
  }
  if (isAppError(err)) {
    const codes = surface === 'extension' ? EXTENSION_CODES : A2A_CODES;
    return build(
      codes[err.reason],
      err.message,
      ERROR_TYPE_NAMES[err.reason],
      err.reason,
      surface,
      correlationId,
      err.details,
      err.hint,
      err.fields,
    );
  }
  return build(
    INTERNAL_ERROR,
    'Internal error',
    'InternalError',
    'INTERNAL',
    surface,
    correlationId,
    {},
    `report correlation id ${correlationId} to the operator`,
    [],
  );
}

/** Every reason an error answer may name in `error.data` (or its ErrorInfo detail): the JSON-RPC
 * layer's own refusals (before any method runs) and the application's. */
export type WireReason = ErrorReason | 'PARSE_ERROR' | 'INVALID_REQUEST' | 'METHOD_NOT_FOUND';

function reasonOfRpc(code: number): WireReason {
  return code === PARSE_ERROR
    ? 'PARSE_ERROR'
    : code === INVALID_REQUEST
      ? 'INVALID_REQUEST'
      : code === METHOD_NOT_FOUND
        ? 'METHOD_NOT_FOUND'
        : 'INTERNAL';
}

function build(
  code: number,
  message: string,
  type: string,
  reason: string,
  surface: ErrorSurface,
  correlationId: string,
  details: Record<string, unknown>,
  hint: string | undefined,
  fields: FieldViolation[],
): JsonRpcErrorObject {
  if (surface === 'a2a-v1') {
    // A detail never hides what the error is (type); a correlation id in the details is the one
    // the failure was logged under, and wins.
    const metadata: Record<string, string> = { correlationId };
    for (const [k, v] of Object.entries(details)) metadata[k] = typeof v === 'string' ? v : JSON.stringify(v);
    metadata['type'] = type;
    if (hint) metadata['hint'] = hint;
    const data: unknown[] = [{ '@type': ERROR_INFO, reason, domain: 'a2a-protocol.org', metadata }];
    if (fields.length > 0) data.push({ '@type': BAD_REQUEST, fieldViolations: fields });
    return { code, message, data };
  }
  // A detail never hides what the error is (clients key on `reason`); a correlation id in the
  // details is the one the failure was logged under, and wins.
  const data: Record<string, unknown> = { correlationId, ...details, type, reason };
  if (hint) data['hint'] = hint;
  if (fields.length > 0) data['fieldViolations'] = fields;
  return { code, message, data };
}

/** Turns zod issues into a validation error naming every failing field. */
export function validationError(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  prefix = '',
): AppError {
  const fields: FieldViolation[] = issues.map((i) => ({
    field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(params)',
    description: i.message,
  }));
  const summary = fields.map((f) => `${f.field}: ${f.description}`).join('; ');
  return new AppError('INVALID_PARAMS', `Invalid parameters: ${summary}`, { fields });
}

export type { ErrorReason };

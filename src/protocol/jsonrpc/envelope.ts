/** JSON-RPC 2.0 envelopes (https://www.jsonrpc.org/specification). */
export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  { jsonrpc: '2.0'; id: JsonRpcId; result: unknown } | { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcErrorObject };

/**
 * A response's JSON text with its result already serialised: exactly what JSON.stringify writes for
 * `{ jsonrpc: '2.0', id, result }`.
 */
export function resultText(id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

export type EnvelopeCheck = { ok: true; request: JsonRpcRequest } | { ok: false; id: JsonRpcId; problem: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the JSON-RPC request envelope; a bad one is an Invalid Request (-32600). */
export function checkEnvelope(msg: unknown): EnvelopeCheck {
  if (!isObject(msg)) return { ok: false, id: null, problem: 'a request must be a JSON object' };
  const rawId = msg['id'];
  const idOk =
    rawId === undefined ||
    rawId === null ||
    typeof rawId === 'string' ||
    (typeof rawId === 'number' && Number.isFinite(rawId));
  const id: JsonRpcId = idOk && rawId !== undefined ? rawId : null;
  if (msg['jsonrpc'] !== '2.0') return { ok: false, id, problem: 'jsonrpc must be "2.0"' };
  if (!idOk) return { ok: false, id: null, problem: 'id must be a string, a number or null' };
  if (typeof msg['method'] !== 'string' || msg['method'].length === 0) {
    return { ok: false, id, problem: 'method must be a non-empty string' };
  }
  const params = msg['params'];
  if (params !== undefined && params !== null && typeof params !== 'object') {
    return { ok: false, id, problem: 'params must be an object or an array' };
  }
  const request: JsonRpcRequest = { jsonrpc: '2.0', method: msg['method'] };
  if (rawId !== undefined) request.id = id;
  if (params !== undefined && params !== null) request.params = params;
  return { ok: true, request };
}

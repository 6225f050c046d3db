/** An MCP tool result as the agent sees it: text for the model, one line for logs. */
import type { McpCallResult } from '../../application/index.ts';

/** The most output a call hands on (characters); the rest is cut and the cut is said. */
export const MAX_OUTPUT_CHARS = 256 * 1024;
const MAX_SUMMARY_CHARS = 200;

/** The slice of the SDK's CallToolResult read here (content parts are checked, not trusted). */
export interface ToolResultLike {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  /** The result of a server on the 2024-10-07 protocol. */
  toolResult?: unknown;
}

type Part = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const base64Bytes = (data: unknown): number => Buffer.byteLength(str(data) ?? '', 'base64');

/** One content part as text: text as it is, binary parts named with their type and size. */
function partText(part: Part): string {
  switch (part.type) {
    case 'text':
      return str(part.text) ?? '';
    case 'image':
    case 'audio':
      return `[${part.type} ${str(part.mimeType) ?? 'unknown type'}, ${base64Bytes(part.data)} bytes]`;
    case 'resource': {
      const res = (typeof part.resource === 'object' && part.resource !== null ? part.resource : {}) as Part;
      const text = str(res.text);
      if (text !== undefined) return text;
      const mime = str(res.mimeType) ? ` ${str(res.mimeType)}` : '';
      return `[resource ${str(res.uri) ?? '(no uri)'}${mime}, ${base64Bytes(res.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link ${str(part.uri) ?? '(no uri)'}]`;
    default:
      return `[${typeof part.type === 'string' ? part.type : 'unknown'} content]`;
  }
}

/** The result's content as text (parts joined by newlines; structured content as JSON when there is no text). */
export function resultText(result: ToolResultLike): string {
  const parts = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const texts = parts.filter((p): p is Part => typeof p === 'object' && p !== null).map(partText);
  const joined = texts.join('\n');
  if (joined.trim() !== '') return joined;
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (result.toolResult !== undefined)
    return typeof result.toolResult === 'string' ? result.toolResult : (JSON.stringify(result.toolResult) ?? '');
  return joined;
}

/** At most MAX_OUTPUT_CHARS, saying how much was cut. */
export function capOutput(text: string, max = MAX_OUTPUT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[output truncated: ${text.length} characters, the first ${max} shown]`;
}

/** The first line of a text, short enough for a log line. */
export function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > MAX_SUMMARY_CHARS ? `${line.slice(0, MAX_SUMMARY_CHARS)}…` : line;
}

function lineCount(text: string): string {
  if (text === '') return 'no output';
  const n = text.replace(/\n$/, '').split('\n').length;
  return n === 1 ? '1 line' : `${n} lines`;
}

/** A tool's result: `isError` is a failure with its text. */
export function toCallResult(label: string, result: ToolResultLike): McpCallResult {
  const text = resultText(result);
  if (result.isError === true) {
    const why = firstLine(text) || 'the tool reported an error';
    return { ok: false, summary: `${label} failed: ${why}`, output: capOutput(text || why) };
  }
  return { ok: true, summary: `${label}: ${lineCount(text)}`, output: capOutput(text) };
}

/** A call that did not reach a result: the summary says which tool and why; the output says the same. */
export function failedCall(label: string, why: string): McpCallResult {
  return { ok: false, summary: `${label} ${why}`, output: `${label} ${why}` };
}

/** JSON with object keys sorted, so equal definitions give equal keys whatever their key order. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

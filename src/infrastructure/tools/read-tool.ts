/** builtin/read: a text file's lines, numbered, a range at a time. */
import { readFile, stat } from 'node:fs/promises';
import type { ToolCallResult } from '../../application/index.ts';
import { MAX_FILE_BYTES } from './file-tools.ts';
import { resolveInSandbox, type ResolvedPath } from './path-guard.ts';
import { int, isBinary, ok, str, ToolFailure, type ToolContext } from './tool-support.ts';

export const DEFAULT_READ_LINES = 2000;
/** A line longer than this is cut (minified code, data): the rest is rarely what a model needs. */
export const MAX_LINE_CHARS = 2000;
/** A read stops before its output passes this, whatever the limit (about 30k tokens). */
export const MAX_READ_BYTES = 128 * 1024;

/** `     12\t…`: the line number right-aligned, as `cat -n` prints it. */
export const numbered = (n: number, line: string): string => `${String(n).padStart(6)}\t${line}`;

export async function readTool({ sandbox, args }: ToolContext): Promise<ToolCallResult> {
  const target = await resolveInSandbox(sandbox.root, str(args, 'path'));
  const offset = int(args, 'offset', 1) ?? 1;
  const limit = int(args, 'limit', 1, 100_000) ?? DEFAULT_READ_LINES;
  const text = await textOf(target, 'read');
  const crlf = text.includes('\r\n');
  const lines = text.split('\n');
  // A final line feed ends the last line; it does not start an empty one.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const total = lines.length;
  if (total === 0) return ok(`read ${target.rel}: empty file`, `[${target.rel} is empty]`);
  if (offset > total)
    throw new ToolFailure(`offset ${offset} is past the end of ${target.rel} (${total} line${total === 1 ? '' : 's'})`);
  const out: string[] = [];
  let bytes = 0;
  let cut = 0;
  let last = offset - 1;
  for (let n = offset; n <= total && n < offset + limit; n++) {
    let line = (lines[n - 1] ?? '').replace(/\r$/, '');
    if (line.length > MAX_LINE_CHARS) {
      line = `${line.slice(0, MAX_LINE_CHARS)}… [line cut: ${line.length} characters]`;
      cut++;
    }
    const shown = numbered(n, line);
    bytes += Buffer.byteLength(shown) + 1;
    if (bytes > MAX_READ_BYTES && out.length > 0) break;
    out.push(shown);
    last = n;
  }
  const notes = [
    cut > 0 ? `${cut} long line${cut === 1 ? '' : 's'} cut at ${MAX_LINE_CHARS} characters` : '',
    crlf ? 'CRLF line endings (shown without CR; edit matches text given with LF)' : '',
  ].filter(Boolean);
  const range = `lines ${offset}–${last} of ${total}`;
  const more = last < total ? `; read on with offset ${last + 1}` : ' (end of file)';
  out.push('', `[${target.rel}: ${range}${more}${notes.length ? `; ${notes.join('; ')}` : ''}]`);
  return ok(`read ${target.rel} ${range}`, out.join('\n'));
}

/**
 * A text file's content for a tool (`purpose` names it in the refusals): not a directory, not
 * missing, not over MAX_FILE_BYTES, not binary. A leading byte-order mark is kept.
 */
export async function textOf(p: ResolvedPath, purpose: string): Promise<string> {
  const st = await stat(p.real).catch(() => undefined);
  if (!st) throw new ToolFailure(`${p.rel} does not exist`);
  if (st.isDirectory()) throw new ToolFailure(`${p.rel} is a directory (list shows what is in it)`);
  if (!st.isFile()) throw new ToolFailure(`${p.rel} is not a regular file`);
  if (st.size > MAX_FILE_BYTES)
    throw new ToolFailure(
      `${p.rel} is ${mb(st.size)}; ${purpose} refuses files over ${mb(MAX_FILE_BYTES)} (grep finds lines in it; bash with head, tail or sed -n shows parts)`,
    );
  const buf = await readFile(p.real);
  if (isBinary(buf))
    throw new ToolFailure(`${p.rel} is a binary file (${buf.length} bytes); ${purpose} shows text only`);
  return buf.toString('utf8');
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

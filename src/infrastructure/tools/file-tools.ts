/** read-file, write-file, edit-file, list-files, search-files — every path through the path guard. */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ToolCallResult } from '../../application/index.ts';
import { compileFilter } from './glob.ts';
import { resolveInSandbox, type ResolvedPath } from './path-guard.ts';
import { runScan } from './regex-runner.ts';
import {
  bool,
  int,
  isBinary,
  MAX_FILE_BYTES,
  ok,
  str,
  strings,
  ToolFailure,
  walkFiles,
  type ToolContext,
} from './tool-support.ts';
import { messageOf } from '../../domain/errors.ts';

export { MAX_FILE_BYTES };
const MAX_LISTED = 10_000;
const MAX_VISITED = 200_000;

export async function readFileTool({ sandbox, args }: ToolContext): Promise<ToolCallResult> {
  const target = await resolveInSandbox(sandbox.root, str(args, 'path'));
  const startLine = int(args, 'startLine', 1);
  const endLine = int(args, 'endLine', 1);
  if (startLine !== undefined && endLine !== undefined && endLine < startLine)
    throw new ToolFailure('endLine must not be before startLine');
  const text = await readText(target);
  // Lines with their terminators, so a range reads back exactly as it is in the file.
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  if (startLine === undefined && endLine === undefined)
    return ok(`read ${target.rel} (${lines.length} lines)`, text, [], MAX_FILE_BYTES);
  const from = startLine ?? 1;
  const to = Math.min(endLine ?? lines.length, lines.length);
  if (from > lines.length)
    throw new ToolFailure(`startLine ${from} is past the end of ${target.rel} (${lines.length} lines)`);
  return ok(
    `read ${target.rel} lines ${from}–${to} of ${lines.length}`,
    lines.slice(from - 1, to).join(''),
    [],
    MAX_FILE_BYTES,
  );
}

export async function writeFileTool({ sandbox, args }: ToolContext): Promise<ToolCallResult> {
  const target = await resolveInSandbox(sandbox.root, str(args, 'path'), { write: true });
  const content = str(args, 'content');
  const data = Buffer.from(content, 'utf8');
  const before = await lstat(target.real).catch(() => undefined);
  if (before?.isDirectory()) throw new ToolFailure(`${target.rel} is a directory`);
  if (before?.isFile() && before.size === data.length && (await readFile(target.real)).equals(data)) {
    return ok(`${target.rel} unchanged (same content)`, '', []);
  }
  await mkdir(path.dirname(target.real), { recursive: true });
  await writeNoFollow(target.real, data);
  return ok(`${before ? 'wrote' : 'created'} ${target.rel} (${data.length} bytes)`, '', [target.rel]);
}

export async function editFileTool({ sandbox, args }: ToolContext): Promise<ToolCallResult> {
  const { target, before, after, count } = await planEditFile(sandbox.root, args);
  if (after === before) return ok(`${target.rel} unchanged (the replacement equals the text found)`, '', []);
  await writeNoFollow(target.real, Buffer.from(after, 'utf8'));
  return ok(`edited ${target.rel}: ${count} replacement${count === 1 ? '' : 's'}`, '', [target.rel]);
}

/** edit-file's change, worked out without writing: every occurrence of `find` (or the only one, with expectOne). */
export async function planEditFile(
  root: string,
  args: Record<string, unknown>,
): Promise<{ target: ResolvedPath; before: string; after: string; count: number }> {
  const target = await resolveInSandbox(root, str(args, 'path'), { write: true });
  const find = str(args, 'find');
  const replace = str(args, 'replace');
  const expectOne = bool(args, 'expectOne') ?? false;
  if (find === '') throw new ToolFailure('argument find must not be empty');
  const before = await readText(target);
  const parts = before.split(find);
  const count = parts.length - 1;
  if (count === 0) throw new ToolFailure(`the text to find does not occur in ${target.rel}`);
  if (expectOne && count !== 1)
    throw new ToolFailure(`the text to find occurs ${count} times in ${target.rel}; expected exactly one`);
  return { target, before, after: parts.join(replace), count };
}

export async function listFilesTool({ sandbox, args, signal }: ToolContext): Promise<ToolCallResult> {
  const start = await resolveInSandbox(sandbox.root, str(args, 'path', true) ?? '.');
  await requireDirectory(start);
  const filter = compileFilter(strings(args, 'include'), strings(args, 'exclude'));
  const walk = await walkFiles(start.real, MAX_VISITED, signal);
  const prefix = start.rel === '' ? '' : `${start.rel}/`;
  const matched = walk.files.filter((f) => filter(f.rel)).map((f) => prefix + f.rel);
  const shown = matched.slice(0, MAX_LISTED);
  const truncated = walk.truncated || matched.length > shown.length;
  return ok(`${shown.length} file${shown.length === 1 ? '' : 's'}${truncated ? ' (truncated)' : ''}`, shown.join('\n'));
}

export async function searchFilesTool({ sandbox, args, signal, timeoutMs }: ToolContext): Promise<ToolCallResult> {
  const source = str(args, 'pattern');
  try {
    // Compiled here only to refuse a malformed pattern at once: it runs in the matching worker.
    void new RegExp(source);
  } catch (e) {
    throw new ToolFailure(`invalid regular expression: ${messageOf(e)}`);
  }
  const start = await resolveInSandbox(sandbox.root, str(args, 'path', true) ?? '.');
  await requireDirectory(start);
  const maxResults = int(args, 'maxResults', 1, 10_000) ?? 200;
  const filter = compileFilter(strings(args, 'include'));
  const walk = await walkFiles(start.real, MAX_VISITED, signal);
  const prefix = start.rel === '' ? '' : `${start.rel}/`;
  const { hits, filesHit, capped } = await runScan(
    {
      kind: 'search',
      source,
      maxResults,
      // Symbolic links are not read: their target is outside (refused) or listed under its own path.
      files: walk.files.filter((f) => !f.symlink && filter(f.rel)).map((f) => ({ abs: f.abs, rel: prefix + f.rel })),
    },
    { signal, timeoutMs },
  );
  const truncated = walk.truncated || capped;
  return ok(
    `${hits.length} match${hits.length === 1 ? '' : 'es'} in ${filesHit} file${filesHit === 1 ? '' : 's'}${truncated ? ' (truncated)' : ''}`,
    hits.join('\n'),
  );
}

async function requireDirectory(p: ResolvedPath): Promise<void> {
  const st = await stat(p.real).catch(() => undefined);
  if (!st?.isDirectory()) throw new ToolFailure(`${p.rel || '.'} is not a directory`);
}

/** A text file's content, refusing directories, missing files, files over 5 MB and binary files. */
async function readText(p: ResolvedPath): Promise<string> {
  const st = await stat(p.real).catch(() => undefined);
  if (!st) throw new ToolFailure(`${p.rel} does not exist`);
  // An empty path is the project's root: say so, not `" is not a file"`.
  if (!st.isFile()) throw new ToolFailure(`${p.rel || 'the project root (an empty path)'} is not a file`);
  if (st.size > MAX_FILE_BYTES)
    throw new ToolFailure(`${p.rel} is ${st.size} bytes; files over ${MAX_FILE_BYTES} bytes are refused`);
  const buf = await readFile(p.real);
  if (isBinary(buf)) throw new ToolFailure(`${p.rel} is a binary file`);
  return buf.toString('utf8');
}

/**
 * Writes through a descriptor opened with O_NOFOLLOW on the already-resolved real path, so a
 * symlink planted there after the check is not followed.
 */
export async function writeNoFollow(real: string, data: Buffer): Promise<void> {
  const fh = await open(real, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666);
  try {
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}

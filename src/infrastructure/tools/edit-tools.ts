/**
 * builtin/edit and builtin/write. Each first plans its change (what the file holds now, what it
 * will hold) without writing: the tool then writes it, a preview shows it as a diff.
 */
import { lstat, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolCallResult } from '../../application/index.ts';
import { applyEdits, type TextEdit } from './edit-match.ts';
import { MAX_FILE_BYTES, writeNoFollow } from './file-tools.ts';
import { resolveInSandbox, type ResolvedPath } from './path-guard.ts';
import { textOf } from './read-tool.ts';
import { isBinary, ok, str, ToolFailure, type ToolContext } from './tool-support.ts';
import { shortDiff, unifiedDiff } from './unified-diff.ts';

export const MAX_EDITS = 50;
/** An edit's answer shows this much of its diff: enough to check it, little enough to keep reading cheap. */
const ANSWER_DIFF_LINES = 120;

/** A file change worked out but not made. */
export interface PlannedChange {
  target: ResolvedPath;
  /** The text now; undefined when the file does not exist yet. */
  before: string | undefined;
  after: string;
  /** Set when the file now is not text a diff can show (binary, or too big): what it is. */
  beforeNote?: string | undefined;
}

export async function planEdit(
  root: string,
  args: Record<string, unknown>,
): Promise<PlannedChange & { replacements: number; edits: number }> {
  const target = await resolveInSandbox(root, str(args, 'path'), { write: true });
  const edits = editsOf(args);
  if (!(await lstat(target.real).catch(() => undefined)))
    throw new ToolFailure(`${target.rel} does not exist (write creates a file)`);
  const before = await textOf(target, 'edit');
  const r = applyEdits(before, edits, target.rel);
  if (!r.ok) throw new ToolFailure(`${r.problem}; nothing was written`, r.detail);
  return { target, before, after: r.text, replacements: r.replacements, edits: edits.length };
}

export async function editTool({ sandbox, args }: ToolContext): Promise<ToolCallResult> {
  const plan = await planEdit(sandbox.root, args);
  const { target, before, after } = plan;
  if (after === before) return ok(`${target.rel} unchanged (the edits undo each other)`);
  await writeNoFollow(target.real, Buffer.from(after, 'utf8'));
  const d = unifiedDiff(target.rel, before, after);
  const edits = `${plan.edits} edit${plan.edits === 1 ? '' : 's'}`;
  const replaced = plan.replacements === plan.edits ? '' : `, ${plan.replacements} replacements`;
  return ok(
    `edited ${target.rel}: ${edits}${replaced}, +${d.additions} −${d.deletions}`,
    shortDiff(d.text, ANSWER_DIFF_LINES),
    [target.rel],
  );
}

export async function planWrite(root: string, args: Record<string, unknown>): Promise<PlannedChange> {
  const target = await resolveInSandbox(root, str(args, 'path'), { write: true });
  const after = str(args, 'content');
  const st = await lstat(target.real).catch(() => undefined);
  if (!st) return { target, before: undefined, after };
  if (st.isDirectory()) throw new ToolFailure(`${target.rel} is a directory`);
  if (!st.isFile()) throw new ToolFailure(`${target.rel} is not a regular file`);
  if (st.size > MAX_FILE_BYTES) return { target, before: '', after, beforeNote: `a file of ${st.size} bytes` };
  const buf = await readFile(target.real);
  if (isBinary(buf)) return { target, before: '', after, beforeNote: `a binary file of ${buf.length} bytes` };
  return { target, before: buf.toString('utf8'), after };
}

export async function writeTool({ sandbox, args }: ToolContext): Promise<ToolCallResult> {
  const { target, before, after, beforeNote } = await planWrite(sandbox.root, args);
  const data = Buffer.from(after, 'utf8');
  if (before === after && beforeNote === undefined) return ok(`${target.rel} unchanged (same content)`);
  await mkdir(path.dirname(target.real), { recursive: true });
  await writeNoFollow(target.real, data);
  if (before === undefined) return ok(`created ${target.rel} (${data.length} bytes)`, '', [target.rel]);
  const was = beforeNote ?? `${Buffer.byteLength(before)} bytes`;
  return ok(`overwrote ${target.rel} (${data.length} bytes; was ${was})`, '', [target.rel]);
}

/** The `edits` argument: 1 to MAX_EDITS objects of oldText, newText and an optional replaceAll. */
function editsOf(args: Record<string, unknown>): TextEdit[] {
  const v = args['edits'];
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_EDITS)
    throw new ToolFailure(`argument edits must be an array of 1 to ${MAX_EDITS} edits`);
  return v.map((e: unknown, i) => {
    const o = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
    const { oldText, newText, replaceAll } = o;
    if (typeof oldText !== 'string' || typeof newText !== 'string')
      throw new ToolFailure(`edits[${i}] must have oldText and newText, both strings`);
    if (replaceAll !== undefined && typeof replaceAll !== 'boolean')
      throw new ToolFailure(`edits[${i}].replaceAll must be a boolean`);
    return { oldText, newText, replaceAll };
  });
}

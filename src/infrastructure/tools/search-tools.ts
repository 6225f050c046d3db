/** builtin/grep, builtin/glob, builtin/list: finding things in the project without reading it all. */
import { lstat, stat } from 'node:fs/promises';
import type { ToolCallResult } from '../../application/index.ts';
import { compileGlob } from './glob.ts';
import { resolveInSandbox, type ResolvedPath } from './path-guard.ts';
import { listDir, projectFiles, startAt, type ProjectEntry } from './project-walk.ts';
import { runScan } from './regex-runner.ts';
import { bool, int, ok, str, ToolFailure, type ToolContext } from './tool-support.ts';
import { messageOf } from '../../domain/errors.ts';

const MAX_VISITED = 200_000;
export const GREP_DEFAULT_RESULTS = 100;
export const GREP_MAX_RESULTS = 1000;
export const GLOB_MAX_RESULTS = 200;
export const LIST_MAX_ENTRIES = 500;

const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

export async function grepTool({ sandbox, args, signal, timeoutMs }: ToolContext): Promise<ToolCallResult> {
  const pattern = str(args, 'pattern');
  let re: RegExp;
  try {
    re = new RegExp(pattern, bool(args, 'ignoreCase') ? 'i' : '');
  } catch (e) {
    throw new ToolFailure(`invalid regular expression /${pattern}/: ${messageOf(e).replace(/^.*: /, '')}`);
  }
  const mode = str(args, 'outputMode', true) ?? 'content';
  if (mode !== 'content' && mode !== 'files' && mode !== 'count')
    throw new ToolFailure('argument outputMode must be content, files or count');
  const context = int(args, 'context', 0, 20) ?? 0;
  const max = int(args, 'maxResults', 1, GREP_MAX_RESULTS) ?? GREP_DEFAULT_RESULTS;
  const globArg = str(args, 'glob', true);
  const matchGlob = globArg === undefined ? () => true : compileGlob(globArg);
  const { start, files, truncated } = await filesUnder(sandbox.root, str(args, 'path', true), signal);
  const { out, matches, shownMatches, filesHit } = await runScan(
    {
      kind: 'grep',
      source: pattern,
      flags: re.flags,
      mode,
      context,
      max,
      // Symbolic links are listed by the walk but never read.
      files: files
        .filter((f) => f.kind === 'file' && matchGlob(relTo(start, f.rel)))
        .map(({ abs, rel }) => ({ abs, rel })),
    },
    { signal, timeoutMs },
  );
  const unit = mode === 'content' ? matches : filesHit;
  const shown = mode === 'content' ? shownMatches : Math.min(filesHit, max);
  const found = `${plural(matches, 'match', 'matches')} in ${plural(filesHit, 'file')}`;
  const notes = [
    unit > shown
      ? `${unit - shown} more ${mode === 'content' ? (unit - shown === 1 ? 'match' : 'matches') : unit - shown === 1 ? 'file' : 'files'} not shown (narrow path, glob or pattern, or raise maxResults up to ${GREP_MAX_RESULTS})`
      : '',
    truncated ? `the search stopped after ${MAX_VISITED} entries; narrow path` : '',
  ].filter(Boolean);
  if (matches === 0) out.push(`no match of /${pattern}/ under ${start.rel || '.'}`);
  if (notes.length) out.push(`[${notes.join('; ')}]`);
  return ok(found + (unit > shown ? ` (${shown} shown)` : ''), out.join('\n'));
}

export async function globTool({ sandbox, args, signal }: ToolContext): Promise<ToolCallResult> {
  const pattern = str(args, 'pattern');
  if (pattern === '') throw new ToolFailure('argument pattern must not be empty');
  const match = compileGlob(pattern);
  const { start, files, truncated } = await filesUnder(sandbox.root, str(args, 'path', true), signal);
  const hits: Array<{ rel: string; mtimeMs: number }> = [];
  for (const f of files) {
    if (!match(relTo(start, f.rel))) continue;
    hits.push({ rel: f.rel, mtimeMs: (await lstat(f.abs).catch(() => undefined))?.mtimeMs ?? 0 });
  }
  // Newest first: what was just worked on is usually what is looked for.
  hits.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.rel < b.rel ? -1 : 1));
  const out = hits.slice(0, GLOB_MAX_RESULTS).map((h) => h.rel);
  if (hits.length === 0) out.push(`no file under ${start.rel || '.'} matches ${pattern}`);
  if (hits.length > GLOB_MAX_RESULTS)
    out.push(`[${hits.length - GLOB_MAX_RESULTS} more not shown; narrow the pattern or path]`);
  if (truncated) out.push(`[the search stopped after ${MAX_VISITED} entries; narrow path]`);
  return ok(
    `${plural(hits.length, 'file')} match ${pattern}${hits.length > GLOB_MAX_RESULTS ? ` (${GLOB_MAX_RESULTS} shown)` : ''}`,
    out.join('\n'),
  );
}

export async function listTool({ sandbox, args, signal }: ToolContext): Promise<ToolCallResult> {
  const start = await resolveInSandbox(sandbox.root, str(args, 'path', true) ?? '.');
  await requireDirectory(start);
  const depth = int(args, 'depth', 1, 10) ?? 2;
  const root = (await resolveInSandbox(sandbox.root, '.')).real;
  const out: string[] = [`${start.rel || '.'}/`];
  let listed = 0;
  let more = 0;
  const visit = async (dirRel: string, rules: Parameters<typeof listDir>[2], level: number): Promise<void> => {
    const { entries, rules: below } = await listDir(root, dirRel, rules);
    for (const e of entries) {
      if (signal.aborted) throw new ToolFailure('cancelled');
      if (listed >= LIST_MAX_ENTRIES) {
        more++;
        continue;
      }
      listed++;
      const indent = '  '.repeat(level);
      if (e.kind !== 'dir') {
        out.push(`${indent}${e.name}${e.kind === 'symlink' ? '@' : ''}`);
        continue;
      }
      if (level < depth) {
        out.push(`${indent}${e.name}/`);
        await visit(e.rel, below, level + 1);
      } else {
        const n = (await listDir(root, e.rel, below)).entries.length;
        out.push(`${indent}${e.name}/${n > 0 ? ` (${plural(n, 'entry', 'entries')})` : ''}`);
      }
    }
  };
  await visit(start.rel, await startAt(root, start.rel), 1);
  if (more > 0) out.push(`[${more} more entries not shown; list a subdirectory or lower depth]`);
  return ok(`listed ${start.rel || '.'} (${plural(listed, 'entry', 'entries')}, depth ${depth})`, out.join('\n'));
}

/** The files under `path` (a directory, or one file), as the project walk sees them. */
async function filesUnder(
  root: string,
  p: string | undefined,
  signal: AbortSignal,
): Promise<{ start: ResolvedPath; files: ProjectEntry[]; truncated: boolean }> {
  const start = await resolveInSandbox(root, p ?? '.');
  const st = await stat(start.real).catch(() => undefined);
  if (!st) throw new ToolFailure(`${start.rel || '.'} does not exist`);
  if (st.isFile()) {
    const name = start.rel.slice(start.rel.lastIndexOf('/') + 1);
    const parent = { real: start.real, rel: start.rel.slice(0, Math.max(0, start.rel.lastIndexOf('/'))) };
    return { start: parent, files: [{ name, rel: start.rel, abs: start.real, kind: 'file' }], truncated: false };
  }
  if (!st.isDirectory()) throw new ToolFailure(`${start.rel} is not a file or a directory`);
  const realRoot = (await resolveInSandbox(root, '.')).real;
  return { start, ...(await projectFiles(realRoot, start.rel, MAX_VISITED, signal)) };
}

/** A path relative to the searched directory (what a glob is matched against). */
const relTo = (start: ResolvedPath, rel: string): string => (start.rel === '' ? rel : rel.slice(start.rel.length + 1));

async function requireDirectory(p: ResolvedPath): Promise<void> {
  const st = await stat(p.real).catch(() => undefined);
  if (!st) throw new ToolFailure(`${p.rel || '.'} does not exist`);
  if (!st.isDirectory()) throw new ToolFailure(`${p.rel} is a file, not a directory (read shows it)`);
}

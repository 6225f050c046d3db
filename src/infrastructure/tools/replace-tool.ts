/** replace-in-files: a regular expression replaced across the files matched by globs. */
import type { ToolCallResult } from '../../application/index.ts';
import { compileFilter } from './glob.ts';
import { resolveInSandbox } from './path-guard.ts';
import { editFileTool, textFiles } from './file-tools.ts';
import { ok, str, strings, ToolFailure, walkFiles, type ToolContext } from './tool-support.ts';

const MAX_VISITED = 200_000;

export async function replaceInFilesTool(ctx: ToolContext): Promise<ToolCallResult> {
  const { sandbox, args, signal } = ctx;
  const pattern = str(args, 'pattern');
  const replacement = str(args, 'replacement');
  const include = strings(args, 'include');
  if (!include?.length) throw new ToolFailure('argument include needs at least one glob');
  const flags = str(args, 'flags', true) ?? 'g';
  if (!/^[gimsuy]*$/.test(flags)) throw new ToolFailure(`invalid regular expression flags ${flags}`);
  let re: RegExp;
  try {
    re = new RegExp(pattern, flags.includes('g') ? flags : `${flags}g`);
  } catch (e) {
    throw new ToolFailure(`invalid regular expression: ${(e as Error).message}`);
  }
  const root = await resolveInSandbox(sandbox.root, '.');
  const filter = compileFilter(include, strings(args, 'exclude'));
  const walk = await walkFiles(root.real, MAX_VISITED, signal);
  const touched: string[] = [];
  let replacements = 0;
  for await (const { file: f, text } of textFiles(walk.files, filter, signal)) {
    const n = [...text.matchAll(re)].length;
    const next = n === 0 ? text : text.replace(re, replacement);
    if (n === 0 || next === text) continue;
    // Written through edit-file's path: the same guard (no symlinks out, no .git) and O_NOFOLLOW write.
    const r = await editFileTool({ ...ctx, args: { path: f.rel, find: text, replace: next } });
    if (!r.ok) throw new ToolFailure(r.summary);
    touched.push(f.rel);
    replacements += n;
  }
  const files = touched.length;
  return ok(
    `replaced ${replacements} match${replacements === 1 ? '' : 'es'} of /${pattern}/ in ${files} file${files === 1 ? '' : 's'}`,
    touched.join('\n'),
    touched,
  );
}

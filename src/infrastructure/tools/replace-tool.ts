/** replace-in-files: a regular expression replaced across the files matched by globs. */
import type { ToolCallResult } from '../../application/index.ts';
import { compileFilter } from './glob.ts';
import { resolveInSandbox } from './path-guard.ts';
import { editFileTool } from './file-tools.ts';
import { runScan } from './regex-runner.ts';
import { ok, str, strings, ToolFailure, walkFiles, type ToolContext } from './tool-support.ts';
import { messageOf } from '../../domain/errors.ts';

const MAX_VISITED = 200_000;

export async function replaceInFilesTool(ctx: ToolContext): Promise<ToolCallResult> {
  const { sandbox, args, signal, timeoutMs } = ctx;
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
    throw new ToolFailure(`invalid regular expression: ${messageOf(e)}`);
  }
  const root = await resolveInSandbox(sandbox.root, '.');
  const filter = compileFilter(include, strings(args, 'exclude'));
  const walk = await walkFiles(root.real, MAX_VISITED, signal);
  // Every change is worked out before the first write: a pattern stopped at its deadline (or a
  // cancelled call) leaves every file as it was.
  const { changes } = await runScan(
    {
      kind: 'replace',
      source: pattern,
      flags: re.flags,
      replacement,
      // Symbolic links are not read: their target is outside (refused) or listed under its own path.
      files: walk.files.filter((f) => !f.symlink && filter(f.rel)).map(({ abs, rel }) => ({ abs, rel })),
    },
    { signal, timeoutMs },
  );
  const touched: string[] = [];
  let replacements = 0;
  for (const c of changes) {
    // Written through edit-file's path: the same guard (no symlinks out, no .git) and O_NOFOLLOW
    // write; a file changed since it was read no longer contains its old text, and is refused.
    const r = await editFileTool({ ...ctx, args: { path: c.rel, find: c.before, replace: c.after } });
    if (!r.ok) throw new ToolFailure(r.summary);
    touched.push(c.rel);
    replacements += c.count;
  }
  const files = touched.length;
  return ok(
    `replaced ${replacements} match${replacements === 1 ? '' : 'es'} of /${pattern}/ in ${files} file${files === 1 ? '' : 's'}`,
    touched.join('\n'),
    touched,
  );
}

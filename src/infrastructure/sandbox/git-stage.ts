/**
 * Staging a sandbox's work tree and committing it with git's plumbing: `ls-files` says what changed
 * (or, given the paths a step wrote, which of them git would stage), `update-index` stages exactly
 * that, and `write-tree`, `commit-tree`, `update-ref` (with the old value) commit it, chained in
 * one script. The same as `git add -A && git commit`, without the part of `add` that reads a nested
 * repository: it asks every populated submodule whether it is dirty by starting git in it, with
 * that repository's configuration.
 *
 * A repository created inside the sandbox (an untracked directory holding `.git`, which `ls-files
 * -o` lists as `dir/` while it lists a plain directory's files) is refused with a
 * {@link NestedRepositoryError}: staged, it would be a gitlink read from that repository's refs,
 * not its files. `nested: 'skip'` leaves it out instead (a command's before/after snapshot).
 */
import { copyFile, writeFile } from 'node:fs/promises';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../../domain/errors.ts';
import { headFromFiles, worktreeFiles } from './git-files.ts';
import { outOf, quote, splitNul, type GitResult, type GitRunner, type ScriptOptions } from './git.ts';

/** The sandbox holds git repositories of its own: refused, with what to do. */
export class NestedRepositoryError extends AppError {
  readonly root: string;
  readonly paths: readonly string[];

  constructor(root: string, paths: readonly string[]) {
    const shown = paths.map((p) => (p.endsWith('/') ? p : `${p}/`));
    const gitDirs = shown.map((p) => `${p}.git`);
    const one = paths.length === 1;
    super(
      'PLAN_ERROR',
      `the sandbox ${root} holds ${one ? 'a git repository' : 'git repositories'} of its own: ${shown.join(', ')}; CleverAgents does not read a repository made inside a sandbox (its configuration could make git run programs), so nothing was checkpointed`,
      {
        details: { kind: 'policy', files: shown },
        hint: `remove ${gitDirs.join(', ')} (in the command that made ${one ? 'it' : 'them'}, e.g. rm -rf ${quote(gitDirs[0] ?? '')}): ${one ? 'its' : 'their'} files are then checkpointed as content`,
      },
    );
    this.root = root;
    this.paths = paths;
    this.name = 'NestedRepositoryError';
  }
}

export interface StageOptions {
  /** Also ignored files (copy sandboxes track everything, as `git add -A -f`). */
  force: boolean;
  /** Only these paths (relative to the root): those a step wrote. Undefined: the whole work tree. */
  paths?: readonly string[] | undefined;
  /** What a repository inside the sandbox gets: refused (checkpoints, diffs, applies) or left out. */
  nested: 'refuse' | 'skip';
}

/** What to stage: paths to hash and add, and paths to drop from the index. */
interface Changes {
  add: string[];
  remove: string[];
}

/**
 * The changes of the work tree against the index (`GIT_INDEX_FILE` in `env`, else the sandbox's):
 * what `ls-files` lists, sorted by what the path holds now — nothing, or a directory that replaced
 * a file: dropped from the index; anything else: added.
 */
async function changesOf(
  run: GitRunner,
  root: string,
  opts: Omit<StageOptions, 'paths'>,
  env: Record<string, string>,
): Promise<Changes> {
  const exclude = opts.force ? [] : ['--exclude-standard'];
  const args = ['ls-files', '-t', '-z', '-o', '-m', ...exclude];
  const out = await outOf(run, root, args, { confine: true, workTree: root, env });
  const add = new Set<string>();
  const remove = new Set<string>();
  const nested: string[] = [];
  for (const entry of splitNul(out)) {
    const tag = entry.slice(0, 2);
    const p = entry.slice(2);
    if (tag === '? ' && p.endsWith('/')) nested.push(p);
    else if (tag === 'R ' || isGoneOrDirectory(path.join(root, p))) remove.add(p);
    else add.add(p);
  }
  if (nested.length > 0 && opts.nested === 'refuse') throw new NestedRepositoryError(root, nested);
  return { add: [...add].filter((p) => !remove.has(p)), remove: [...remove] };
}

function isGoneOrDirectory(abs: string): boolean {
  try {
    return lstatSync(abs).isDirectory();
  } catch {
    return true;
  }
}

/** The script that stages `changes` (written as `$D/rm` and `$D/add`) into the index. */
async function stagingScript(dir: string, changes: Changes): Promise<string> {
  const nul = (paths: readonly string[]): string => paths.map((p) => `${p}\0`).join('');
  let script = '';
  if (changes.remove.length > 0) {
    await writeFile(path.join(dir, 'rm'), nul(changes.remove));
    script += `g update-index --force-remove -z --stdin <"$D/rm" || exit $?\n`;
  }
  if (changes.add.length > 0) {
    await writeFile(path.join(dir, 'add'), nul(changes.add));
    script += `g update-index --add --replace -z --stdin <"$D/add" || exit $?\n`;
  }
  return script;
}

/** Exit codes of {@link wholeStageScript}: nested repositories found (on stdout); `update-index` refused. */
const NESTED_EXIT = 3;
const REFUSED_EXIT = 4;

/**
 * Stages the whole work tree in the same script as what follows (one request): `ls-files`, the
 * nested repositories refused (their `dir/` entries on stdout) or left out, `update-index` of the
 * rest. When `update-index` refuses (a file became a directory), the caller stages by
 * {@link changesOf} instead: the index is written only when `update-index` succeeds.
 */
function wholeStageScript(opts: Omit<StageOptions, 'paths'>): string {
  const exclude = opts.force ? '' : ' --exclude-standard';
  const refuse =
    opts.nested === 'refuse'
      ? `if grep -qz '^? .*/$' "$D/list"; then grep -z '^? .*/$' "$D/list"; exit ${NESTED_EXIT}; fi\n`
      : '';
  // -m lists deleted files too (-d would stat every entry a second time).
  return `g ls-files -t -z -o -m${exclude} >"$D/list" || exit $?
${refuse}grep -zv '^? .*/$' "$D/list" | sed -z 's/^..//' >"$D/paths"
if [ -s "$D/paths" ]; then g update-index --add --remove --replace -z --stdin <"$D/paths" || exit ${REFUSED_EXIT}; fi
`;
}

/**
 * Runs `tail` (a script) after staging the work tree (see {@link StageOptions}) into the index
 * (`GIT_INDEX_FILE` in `env`, else the sandbox's), with `$D` the scratch directory `dir`.
 */
async function afterStaging(
  run: GitRunner,
  root: string,
  dir: string,
  opts: StageOptions,
  tail: string,
  script: ScriptOptions,
  shown: readonly string[],
): Promise<GitResult> {
  const o: ScriptOptions = { confine: true, workTree: root, ...script, vars: { D: dir, ...script.vars } };
  if (opts.paths !== undefined) {
    // Of the paths, those git tracks (changed or deleted) and the new ones it does not ignore.
    const exclude = opts.force ? '' : ' --exclude-standard';
    const words = opts.paths.map(quote).join(' ');
    const stage = `g --literal-pathspecs ls-files -z -c -o${exclude} -- ${words} >"$D/paths" || exit $?
g update-index --add --remove --replace -z --stdin <"$D/paths" || exit $?
`;
    return run.script(root, stage + tail, o, shown);
  }
  const r = await run.script(
    root,
    wholeStageScript(opts) + tail,
    { ...o, okCodes: [NESTED_EXIT, REFUSED_EXIT] },
    shown,
  );
  if (r.code === NESTED_EXIT)
    throw new NestedRepositoryError(
      root,
      splitNul(r.stdout).map((l) => l.slice(2)),
    );
  if (r.code !== REFUSED_EXIT) return r;
  const changes = await changesOf(run, root, opts, script.env ?? {});
  return run.script(root, (await stagingScript(dir, changes)) + tail, o, shown);
}

/**
 * The script that commits the index on HEAD's branch with message `$M`. `git commit` rather than
 * `write-tree`, `commit-tree` and `update-ref`: one process instead of three (a plan pays this
 * after every write step), and it moves the branch from the HEAD it read (compare-and-swap) and
 * writes both reflogs as the plumbing would. Hooks, signing and automatic maintenance are off (git.ts).
 */
const COMMIT_SCRIPT = `g commit -q --allow-empty --no-verify -m "$M" || exit $?\n`;

export interface CommitRequest extends StageOptions {
  root: string;
  message: string;
}

/**
 * Stages (the given paths, or everything) and commits as CleverAgents on HEAD's branch; returns
 * the commit's id. One script: `ls-files`, `update-index`, `commit`.
 */
export async function stageAndCommit(run: GitRunner, req: CommitRequest): Promise<string> {
  const message = req.message.replace(/\0/g, '');
  const opts = { confine: true, identity: true, workTree: req.root } as const;
  await run.scratch((dir) =>
    afterStaging(run, req.root, dir, req, COMMIT_SCRIPT, { ...opts, vars: { M: message } }, [
      'add',
      '-A',
      '&&',
      'git',
      'commit',
      '-m',
      message,
    ]),
  );
  // Git has just written the branch's loose ref: reading it spares a process.
  return headFromFiles(req.root) ?? outOf(run, req.root, ['rev-parse', 'HEAD'], opts);
}

/**
 * Runs `tail` on a snapshot of the sandbox's work tree (tracked, changed and untracked files),
 * staged into a throw-away index so the sandbox's own index — and what the next checkpoint
 * records — is untouched; `tail` finds its tree in `$t` and may write files in `$D`. `read` makes
 * the answer of the script's output and that directory.
 */
export async function withSnapshot<T>(
  run: GitRunner,
  root: string,
  opts: Omit<StageOptions, 'paths'>,
  tail: string,
  vars: Record<string, string>,
  read: (r: GitResult, dir: string) => Promise<T>,
): Promise<T> {
  return run.scratch(async (dir) => {
    const index = path.join(dir, 'index');
    const files = worktreeFiles(root);
    // Starting from a copy of the real index keeps its stat cache: only what changed is hashed again.
    if (files) await copyFile(path.join(files.gitDir, 'index'), index).catch(() => undefined);
    const script = `t=$(g write-tree) || exit $?\n${tail}`;
    const r = await afterStaging(run, root, dir, opts, script, { env: { GIT_INDEX_FILE: index }, vars }, [
      'add',
      '-A',
      '&&',
      'git',
      'write-tree',
    ]);
    return read(r, dir);
  });
}

/** The tree object of everything in a sandbox's work tree right now (see {@link withSnapshot}). */
export function snapshotTree(run: GitRunner, root: string, opts: Omit<StageOptions, 'paths'>): Promise<string> {
  return withSnapshot(run, root, opts, 'echo "$t"\n', {}, (r) =>
    Promise.resolve(r.stdout.trim().split('\n').at(-1) ?? ''),
  );
}

/**
 * The submodule paths (gitlinks) of a commit. A plan cannot add one — a repository made in the
 * sandbox is refused — so a sandbox's are its base commit's, listed once per base.
 */
export async function submodulePaths(run: GitRunner, root: string, commit: string): Promise<string[]> {
  const out = await outOf(run, root, ['ls-tree', '-r', '-z', '--full-tree', commit], { confine: true });
  return splitNul(out)
    .filter((l) => l.startsWith('160000 '))
    .map((l) => l.slice(l.indexOf('\t') + 1));
}

/** Whether the sandbox at `root` holds work not yet checkpointed. */
export async function hasPendingWork(run: GitRunner, root: string): Promise<boolean> {
  const args = ['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=all'];
  return (await outOf(run, root, args, { confine: true, workTree: root })) !== '';
}

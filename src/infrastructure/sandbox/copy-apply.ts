/**
 * Applying a copy sandbox: the sandbox's changes written back to the user's directory, all or
 * nothing under `kill -9` at any instant. Refused (nothing written) when a file to change is no
 * longer what it was at copy time; a file that already holds the sandbox's version (an apply the
 * recovery completed, applied again) is left as it is.
 *
 * The new files are first written into a staging directory inside the user's directory (the same
 * file system, so a rename moves each one in whole) while the journal says `staging` — a crash
 * there is rolled back. The journal rewritten with `commit` is the commit point; then deletions
 * are made and the staged files renamed into place — a crash there is rolled forward.
 */
import { chmod, copyFile, lstat, mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { mkdirSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { ApplyOutcome, SandboxInfo } from '../../application/index.ts';
import { journalId, type ApplyJournals, type CopyJournal } from './apply-journal.ts';
import { MANIFEST, entryOf, same, type Entry, type Manifest } from './copy-sandbox.ts';
import { snapshotTree } from './git-stage.ts';
import type { GitRunner } from './git.ts';
import { changedPaths } from './sandbox-diff.ts';
import { lstatOrUndefined, pruneEmptyParents } from './sandbox-files.ts';

type Now = Awaited<ReturnType<typeof entryOf>>;

/** Applies (see the module's comment); `run` is the sandbox's git, the caller serialises applies per directory. */
export async function applyCopySandbox(
  sandbox: SandboxInfo,
  run: GitRunner,
  journals: ApplyJournals,
): Promise<ApplyOutcome> {
  const tree = await snapshotTree(run, sandbox.root, { force: true, nested: 'refuse' });
  const files = await changedPaths(run, sandbox.root, sandbox.baseCommit, tree);
  if (files.length === 0) return { ok: true, files: [] };
  const manifest = JSON.parse(await readFile(path.join(sandbox.root, '.git', MANIFEST), 'utf8')) as Manifest;

  // What the sandbox now holds at each changed path; a file that is gone, or is now a directory, is deleted.
  const after = new Map<string, Now>();
  for (const f of files) after.set(f, await entryOf(path.join(sandbox.root, f)));
  const deleted = new Set(files.filter((f) => after.get(f) === undefined || after.get(f) === 'dir'));

  const { conflicts, todo } = await sortOut(sandbox.source, files, manifest, after, deleted);
  if (conflicts.length > 0) {
    return {
      ok: false,
      reason: 'conflict',
      files: conflicts,
      message: `${conflicts.length} file(s) changed in ${sandbox.source} since the sandbox was made: ${conflicts.join(', ')}`,
    };
  }
  if (todo.length === 0) return { ok: true, files };

  const id = journalId();
  const writes = todo
    .filter((f) => !deleted.has(f) && after.get(f) !== 'other')
    .map((f, i) => ({ path: f, staged: String(i) }));
  const journal: CopyJournal = {
    version: 1,
    kind: 'copy',
    id,
    repository: sandbox.source,
    staging: path.join(sandbox.source, `.cleveragents-apply-${id}`),
    phase: 'staging',
    writes,
    deleted: todo.filter((f) => deleted.has(f)),
    createdAt: new Date().toISOString(),
  };
  const file = journals.fileOf(sandbox.root);
  journals.write(file, journal);
  try {
    await stage(sandbox.root, journal, after);
  } catch (e) {
    await rm(journal.staging, { recursive: true, force: true });
    journals.remove(file);
    throw e;
  }
  journals.write(file, { ...journal, phase: 'commit' });
  finishCopyApply(journal);
  journals.remove(file);
  return { ok: true, files };
}

/**
 * Each changed path of the user's directory: already as the sandbox leaves it (skipped), as the
 * sandbox found it (to do), or changed since (a conflict).
 */
async function sortOut(
  source: string,
  files: readonly string[],
  manifest: Manifest,
  after: ReadonlyMap<string, Now>,
  deleted: ReadonlySet<string>,
): Promise<{ conflicts: string[]; todo: string[] }> {
  const conflicts: string[] = [];
  const todo: string[] = [];
  for (const f of files) {
    const base = Object.prototype.hasOwnProperty.call(manifest, f) ? manifest[f] : undefined;
    const now = await entryOf(path.join(source, f));
    const want = after.get(f);
    if (holds(now, deleted.has(f) ? undefined : want)) continue;
    if (same(now, base) && (await parentsAreDirectories(source, f, deleted))) todo.push(f);
    else conflicts.push(f);
  }
  return { conflicts, todo };
}

/** Copies what the apply writes into the journal's staging directory (symlinks as links, modes kept). */
async function stage(root: string, journal: CopyJournal, after: ReadonlyMap<string, Now>): Promise<void> {
  await mkdir(journal.staging);
  for (const w of journal.writes) {
    const from = path.join(root, w.path);
    const to = path.join(journal.staging, w.staged);
    const now = after.get(w.path) as Entry;
    if (now.type === 'symlink') await symlink(now.target, to);
    else {
      await copyFile(from, to);
      await chmod(to, (await lstat(from)).mode & 0o7777);
    }
  }
}

/** Whether `now` is exactly what the apply would leave there (`want` undefined: nothing). */
function holds(now: Now, want: Now): boolean {
  if (want === undefined || want === 'dir') return now === undefined;
  if (want === 'other' || now === undefined || now === 'dir' || now === 'other') return false;
  if (want.type === 'symlink') return now.type === 'symlink' && now.target === want.target;
  return now.type === 'file' && now.sha256 === want.sha256 && now.exec === want.exec;
}

/**
 * Makes the deletions and moves the staged files into place; whatever part of this was done
 * before (a crash) is skipped: a staged file that is gone was moved, a deleted path that is a
 * directory now holds what the apply wrote there.
 */
export function finishCopyApply(j: CopyJournal): void {
  for (const d of j.deleted) {
    const abs = path.join(j.repository, d);
    const st = lstatOrUndefined(abs);
    if (!st || st.isDirectory()) continue;
    unlinkSync(abs);
    pruneEmptyParents(j.repository, d);
  }
  for (const w of j.writes) {
    const staged = path.join(j.staging, w.staged);
    if (!lstatOrUndefined(staged)) continue;
    const to = path.join(j.repository, w.path);
    mkdirSync(path.dirname(to), { recursive: true });
    renameSync(staged, to);
  }
  rmSync(j.staging, { recursive: true, force: true });
}

/** Recovers an interrupted copy apply: staging → rolled back, commit → completed. */
export function recoverCopyApply(j: CopyJournal): { outcome: 'rolled-back' | 'completed'; detail: string } {
  if (j.phase === 'staging') {
    rmSync(j.staging, { recursive: true, force: true });
    return { outcome: 'rolled-back', detail: `nothing was written to ${j.repository}` };
  }
  finishCopyApply(j);
  return { outcome: 'completed', detail: `the changes were written to ${j.repository}` };
}

/**
 * True when every existing parent of `rel` under `dir` is a real directory (not a file, not a
 * symlink) — or a file the apply deletes first.
 */
async function parentsAreDirectories(dir: string, rel: string, deleted: ReadonlySet<string>): Promise<boolean> {
  const parts = rel.split('/').slice(0, -1);
  let cur = dir;
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i] ?? '');
    const st = await lstat(cur).catch(() => undefined);
    if (!st) return true;
    if (!st.isDirectory()) return !st.isSymbolicLink() && deleted.has(parts.slice(0, i + 1).join('/'));
  }
  return true;
}

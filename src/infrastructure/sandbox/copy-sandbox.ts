/**
 * Sandboxes for directories that are not git work trees: a copy with a private git repository (so
 * checkpoints, restore and diff work the same as for worktrees) and a manifest of what each source
 * file held at copy time, so apply can tell which files the user changed since.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  readFile,
  readdir,
  readlink,
  rename,
  rm,
  rmdir,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import type { ApplyOutcome, SandboxInfo } from '../../application/index.js';
import { git, gitOut, snapshotTree } from './git.js';
import { changedPaths } from './sandbox-diff.js';

const MANIFEST = 'cleveragents-base.json';

/** What a path held: a regular file (content hash, executable bit), a symlink (target), or nothing. */
type Entry = { type: 'file'; sha256: string; exec: boolean } | { type: 'symlink'; target: string };
type Manifest = Record<string, Entry>;

/** Copies `source` into `dest` (which must not exist), commits it as the base; returns the base commit. */
export async function createCopySandbox(source: string, dest: string, label: string): Promise<string> {
  await mkdir(dest, { recursive: true });
  const manifest: Manifest = {};
  await copyTree(source, dest, '', manifest);
  const opts = { confine: true, identity: true };
  await git(dest, ['init', '-q', '-b', 'sandbox'], { confine: true });
  for (const [k, v] of [
    ['core.autocrlf', 'false'],
    ['core.hooksPath', '/dev/null'],
    ['commit.gpgsign', 'false'],
    ['gc.auto', '0'],
  ] as const) {
    await git(dest, ['config', k, v], { confine: true });
  }
  await git(dest, ['add', '-A', '-f', '--', '.'], opts);
  await git(dest, ['commit', '-q', '--allow-empty', '--no-verify', '-m', `base: ${label}`], opts);
  const gitDir = path.resolve(dest, await gitOut(dest, ['rev-parse', '--git-dir'], { confine: true }));
  await writeFile(path.join(gitDir, MANIFEST), JSON.stringify(manifest));
  return gitOut(dest, ['rev-parse', 'HEAD'], { confine: true });
}

async function copyTree(src: string, dest: string, rel: string, manifest: Manifest): Promise<void> {
  const entries = await readdir(path.join(src, rel), { withFileTypes: true });
  for (const e of entries) {
    // A nested repository would become an opaque gitlink in the sandbox's repository.
    if (e.name === '.git') continue;
    const r = rel === '' ? e.name : `${rel}/${e.name}`;
    const from = path.join(src, r);
    const to = path.join(dest, r);
    if (e.isDirectory()) {
      await mkdir(to);
      await copyTree(src, dest, r, manifest);
    } else if (e.isSymbolicLink()) {
      const target = await readlink(from);
      await symlink(target, to);
      manifest[r] = { type: 'symlink', target };
    } else if (e.isFile()) {
      await copyFile(from, to);
      // Hash the copy, not the source: the manifest must describe exactly the sandbox's base.
      manifest[r] = (await entryOf(to)) as Entry;
    }
    // Sockets, FIFOs and devices are not content; they are not copied.
  }
}

async function entryOf(file: string): Promise<Entry | 'dir' | 'other' | undefined> {
  const st = await lstat(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return undefined;
    throw e;
  });
  if (!st) return undefined;
  if (st.isSymbolicLink()) return { type: 'symlink', target: await readlink(file) };
  if (st.isDirectory()) return 'dir';
  if (!st.isFile()) return 'other';
  const sha256 = createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
  return { type: 'file', sha256, exec: (st.mode & 0o100) !== 0 };
}

/** Whether what is on disk now is what the manifest recorded (a missing file matches a missing entry). */
function same(now: Entry | 'dir' | 'other' | undefined, base: Entry | undefined): boolean {
  if (now === undefined || base === undefined) return now === base;
  if (now === 'dir' || now === 'other') return false;
  if (now.type === 'symlink') return base.type === 'symlink' && now.target === base.target;
  return base.type === 'file' && now.sha256 === base.sha256;
}

/**
 * Writes the sandbox's changes back to the user's directory, refusing (and writing nothing) when
 * any changed file is not what it was at copy time in the user's directory.
 */
export async function applyCopySandbox(sandbox: SandboxInfo): Promise<ApplyOutcome> {
  const tree = await snapshotTree(sandbox.root, true);
  const files = await changedPaths(sandbox.root, sandbox.baseCommit, tree);
  if (files.length === 0) return { ok: true, files: [] };
  const gitDir = path.resolve(sandbox.root, await gitOut(sandbox.root, ['rev-parse', '--git-dir'], { confine: true }));
  const manifest = JSON.parse(await readFile(path.join(gitDir, MANIFEST), 'utf8')) as Manifest;

  // What the sandbox now holds at each changed path; a file that is gone, or is now a directory, is deleted.
  const after = new Map<string, Awaited<ReturnType<typeof entryOf>>>();
  for (const f of files) after.set(f, await entryOf(path.join(sandbox.root, f)));
  const deleted = new Set(files.filter((f) => after.get(f) === undefined || after.get(f) === 'dir'));

  const conflicts: string[] = [];
  for (const f of files) {
    const base = Object.prototype.hasOwnProperty.call(manifest, f) ? manifest[f] : undefined;
    if (
      !same(await entryOf(path.join(sandbox.source, f)), base) ||
      !(await parentsAreDirectories(sandbox.source, f, deleted))
    )
      conflicts.push(f);
  }
  if (conflicts.length > 0) {
    return {
      ok: false,
      reason: 'conflict',
      files: conflicts,
      message: `${conflicts.length} file(s) changed in ${sandbox.source} since the sandbox was made: ${conflicts.join(', ')}`,
    };
  }

  // Deletions first, so a file the plan replaced by a directory of the same name is out of the way.
  for (const f of deleted) {
    await rm(path.join(sandbox.source, f), { force: true });
    await pruneEmptyParents(sandbox.source, f);
  }
  for (const f of files) {
    const now = after.get(f);
    if (now === undefined || now === 'dir' || now === 'other') continue;
    const from = path.join(sandbox.root, f);
    const to = path.join(sandbox.source, f);
    await mkdir(path.dirname(to), { recursive: true });
    // Write beside the target and rename over it, so the user never sees a half-written file.
    const tmp = `${to}.cleveragents-${randomBytes(4).toString('hex')}`;
    try {
      if (now.type === 'symlink') await symlink(now.target, tmp);
      else {
        await copyFile(from, tmp);
        await chmod(tmp, (await lstat(from)).mode & 0o7777);
      }
      await rename(tmp, to);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
  }
  return { ok: true, files };
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

async function pruneEmptyParents(dir: string, rel: string): Promise<void> {
  const parts = rel.split('/').slice(0, -1);
  while (parts.length > 0) {
    try {
      await rmdir(path.join(dir, ...parts));
    } catch {
      return;
    }
    parts.pop();
  }
}

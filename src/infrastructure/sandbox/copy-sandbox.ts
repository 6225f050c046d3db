/**
 * Sandboxes for directories that are not git work trees: a copy with a private git repository (so
 * checkpoints, restore and diff work the same as for worktrees) and a manifest of what each source
 * file held at copy time, so apply can tell which files the user changed since.
 */
import { createHash } from 'node:crypto';
import { copyFile, lstat, mkdir, readFile, readdir, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxInfo } from '../../application/index.ts';
import type { ResourceDefinition } from '../../domain/registry/resource.definition.ts';
import { directGit, outOf } from './git.ts';
import { writeInfo } from './sandbox-files.ts';

/** The manifest's file, in the sandbox's git directory. */
export const MANIFEST = 'cleveragents-base.json';

/** What a path held: a regular file (content hash, executable bit), a symlink (target), or nothing. */
export type Entry = { type: 'file'; sha256: string; exec: boolean } | { type: 'symlink'; target: string };
export type Manifest = Record<string, Entry>;

/** Copies `source` into `dest` (which must not exist), commits it as the base; returns the base commit. */
export async function createCopySandbox(source: string, dest: string, label: string): Promise<string> {
  await mkdir(dest, { recursive: true });
  const manifest: Manifest = {};
  await copyTree(source, dest, '', manifest);
  const opts = { confine: true, identity: true, workTree: dest };
  const run = directGit;
  await run.run(dest, ['init', '-q', '-b', 'sandbox'], { confine: true });
  for (const [k, v] of [
    ['core.autocrlf', 'false'],
    ['core.hooksPath', '/dev/null'],
    ['commit.gpgsign', 'false'],
    ['gc.auto', '0'],
  ] as const) {
    await run.run(dest, ['config', k, v], { confine: true });
  }
  // The user's own files, copied without any `.git`: git's commands are safe here unconfined.
  await run.run(dest, ['add', '-A', '-f', '--', '.'], opts);
  await run.run(dest, ['commit', '-q', '--allow-empty', '--no-verify', '-m', `base: ${label}`], opts);
  await writeFile(path.join(dest, '.git', MANIFEST), JSON.stringify(manifest));
  return outOf(run, dest, ['rev-parse', 'HEAD'], { confine: true });
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

/** What `file` holds now (a directory, something else, or nothing at all). */
export async function entryOf(file: string): Promise<Entry | 'dir' | 'other' | undefined> {
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
export function same(now: Entry | 'dir' | 'other' | undefined, base: Entry | undefined): boolean {
  if (now === undefined || base === undefined) return now === base;
  if (now === 'dir' || now === 'other') return false;
  if (now.type === 'symlink') return base.type === 'symlink' && now.target === base.target;
  return base.type === 'file' && now.sha256 === base.sha256;
}

/** The copy sandbox of `resource` at `dir`, made and recorded beside it (nothing left behind on a failure). */
export async function createCopyInfo(
  resource: Extract<ResourceDefinition, { type: 'fs-directory' }>,
  source: string,
  dir: string,
): Promise<SandboxInfo> {
  if (!(await stat(source)).isDirectory()) throw new Error(`resource ${resource.name}: ${source} is not a directory`);
  try {
    const baseCommit = await createCopySandbox(source, dir, `copy of ${source}`);
    const info: SandboxInfo = { resource: resource.name, kind: 'copy', root: dir, source, baseCommit };
    await writeInfo(info);
    return info;
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

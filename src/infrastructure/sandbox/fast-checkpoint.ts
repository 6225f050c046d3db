/**
 * A checkpoint of a sandbox whose changes since its last checkpoint are known, path by path (a
 * plan's built-in file tools report what they wrote): the commit `git add -A && git commit` would
 * make, written without a git process per checkpoint. A plan checkpoints after every write step,
 * and those two git processes were most of a step's cost.
 *
 * Git still does what depends on the repository's configuration: one long-running
 * `git hash-object -w --stdin-paths` per sandbox hashes the files (clean filters, end-of-line
 * conversion), and one `git check-ignore --stdin` says which new files the ignore rules keep out.
 * In process: the index (its entries for those paths and its cache tree), the trees along those
 * paths, the commit, the branch and the reflogs — each written as git writes it (lock file, then
 * rename; objects written aside and renamed in), synchronously: see {@link writeLooseObject}.
 *
 * It only goes ahead when the sandbox is in the state it assumes, checked every time: the index
 * holds exactly the last checkpoint (its cache tree's root is HEAD's tree), HEAD is a loose
 * branch of a SHA-1 repository, no merge is in progress, and every changed path is a regular file
 * (or gone) reached through real directories, outside `.git` and outside any nested repository,
 * with no ignore or attribute file among them. Anything else answers undefined, and the caller
 * makes the checkpoint with git's own commands.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { COMMIT_IDENTITY, worktreeHead } from './git.js';
import { GitBatch } from './git-batch.js';
import {
  compareNames,
  makeEntry,
  parseIndex,
  recordedSize,
  serializeIndex,
  smudged,
  type CacheTree,
  type EntryStat,
  type IndexEntry,
} from './git-index.js';
import { readLooseObject, treeBody, treeOfCommit, writeLooseObject, type TreeItem } from './git-objects.js';

/** More changed paths than this, and scanning the whole sandbox is no slower. */
const MAX_PATHS = 256;
/** More racily clean entries than this (a fresh checkout), and git's commands make the checkpoint. */
const MAX_RACY = 64;
const OID = /^[0-9a-f]{40}$/;
const LABEL = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** Files whose change alters how other paths are staged: their checkpoint is git's. */
const RULE_FILES = new Set(['.gitignore', '.gitattributes', '.gitmodules']);
const CONFINED = { confine: true } as const;
const FILE = 0o100644;
const EXECUTABLE = 0o100755;

/** The long-running git commands of each sandbox, started when first needed. */
export class CheckpointHelpers {
  readonly #by = new Map<string, { hash?: GitBatch; ignore?: GitBatch }>();

  hash(root: string): GitBatch {
    return this.#get(root, 'hash', () => new GitBatch(root, ['hash-object', '-w', '--stdin-paths'], '\n', CONFINED));
  }

  ignore(root: string): GitBatch {
    return this.#get(
      root,
      'ignore',
      () => new GitBatch(root, ['check-ignore', '--stdin', '-z', '-v', '-n', '--no-index'], '\0', CONFINED),
    );
  }

  /** Ends a sandbox's commands (before it is removed). */
  close(root: string): void {
    const h = this.#by.get(root);
    this.#by.delete(root);
    h?.hash?.close();
    h?.ignore?.close();
  }

  #get(root: string, kind: 'hash' | 'ignore', make: () => GitBatch): GitBatch {
    let h = this.#by.get(root);
    if (!h) this.#by.set(root, (h = {}));
    const existing = h[kind];
    if (existing?.usable) return existing;
    const made = make();
    h[kind] = made;
    return made;
  }
}

export interface FastCheckpointRequest {
  /** The sandbox's root: a work tree whose `.git` is a directory or a `gitdir:` file. */
  root: string;
  /** Paths (relative to the root, `/`-separated) that may differ from the last checkpoint. */
  changed: readonly string[];
  label: string;
  /** Stage ignored files too (`git add -A -f`, as copy sandboxes do). */
  force: boolean;
  helpers: CheckpointHelpers;
  now?: Date;
}

/** Not the state this checkpoint assumes: git's commands make it instead. */
class NotHere extends Error {}

/**
 * Commits the changed paths on top of HEAD (author and committer {@link COMMIT_IDENTITY}, message
 * `checkpoint: <label>`) and returns the commit's id; undefined when the sandbox is not in the
 * state described above (nothing is then written).
 */
export async function fastCheckpoint(req: FastCheckpointRequest): Promise<string | undefined> {
  if (!LABEL.test(req.label)) return undefined;
  const changed = [...new Set(req.changed)];
  if (changed.length > MAX_PATHS || !changed.every(plainPath)) return undefined;
  const root = attempt(() => realpathSync(req.root));
  const layout = root === undefined ? undefined : layoutOf(root);
  if (!root || !layout) return undefined;
  const indexFile = path.join(layout.gitDir, 'index');
  const lock = `${indexFile}.lock`;
  let fd: number | undefined;
  // The index is locked once git's helpers have answered, so that nothing is awaited while the
  // lock is held; the index must then still be the one the checkpoint was worked out from.
  const lockIndex = (seen: Buffer): boolean => {
    fd = attempt(() => openSync(lock, 'wx'));
    return fd !== undefined && (attempt(() => readFileSync(indexFile))?.equals(seen) ?? false);
  };
  let open = true;
  let written = false;
  try {
    const commit = await prepare(req, root, layout, indexFile, changed, lockIndex);
    if (!commit || fd === undefined) return undefined;
    writeFileSync(fd, commit.index);
    closeSync(fd);
    open = false;
    if (!moveBranch(layout, commit.parent, commit.oid, req.label, commit.when)) return undefined;
    renameSync(lock, indexFile);
    written = true;
    return commit.oid;
  } catch (e) {
    if (e instanceof NotHere) return undefined;
    throw e;
  } finally {
    // A lock someone else holds (fd undefined) is theirs to remove.
    if (fd !== undefined) {
      if (open) closeSync(fd);
      if (!written) rmSync(lock, { force: true });
    }
  }
}

/** `f()`, or undefined when it throws (a file that is not there, a lock someone holds). */
function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

interface Layout {
  gitDir: string;
  common: string;
  /** HEAD's branch, e.g. `refs/heads/cleveragents/plan-x`. */
  ref: string;
  parent: string;
}

function layoutOf(root: string): Layout | undefined {
  const head = worktreeHead(root);
  if (!head?.ref || !OID.test(head.oid)) return undefined;
  // A merge, cherry-pick or revert in progress commits with more than HEAD as its parents.
  if (['MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'].some((f) => existsSync(path.join(head.gitDir, f))))
    return undefined;
  return { gitDir: head.gitDir, common: head.common, ref: head.ref, parent: head.oid };
}

/** A relative path we can stage without git: no `.`/`..`/empty segment, nothing of git's own. */
function plainPath(p: string): boolean {
  if (p === '' || p.startsWith('/') || /[\0\n\r]/.test(p) || p.startsWith('"')) return false;
  const segs = p.split('/');
  if (segs.some((s) => s === '' || s === '.' || s === '..' || s.toLowerCase() === '.git')) return false;
  return !RULE_FILES.has((segs.at(-1) ?? '').toLowerCase());
}

interface Prepared {
  oid: string;
  parent: string;
  index: Buffer;
  when: Date;
}

async function prepare(
  req: FastCheckpointRequest,
  root: string,
  layout: Layout,
  indexFile: string,
  changed: readonly string[],
  lockIndex: (seen: Buffer) => boolean,
): Promise<Prepared | undefined> {
  const objects = path.join(layout.common, 'objects');
  const head = readLooseObject(objects, layout.parent);
  const headTree = head?.type === 'commit' ? treeOfCommit(head.body) : undefined;
  const indexStat = attempt(() => statSync(indexFile));
  const indexBytes = indexStat ? attempt(() => readFileSync(indexFile)) : undefined;
  const index = indexBytes ? parseIndex(indexBytes) : undefined;
  if (!headTree || !indexStat || !indexBytes || !index) return undefined;
  // The index must hold exactly HEAD: a valid cache tree whose root is HEAD's tree.
  if (index.tree?.entryCount !== index.entries.length || index.tree.oid !== headTree) return undefined;
  if (index.entries.some((e) => e.stage !== 0 || e.extended)) return undefined;
  const byName = new Map(index.entries.map((e) => [e.name, e]));

  const files: { name: string; st: FileStat; mode: number }[] = [];
  const removed = new Set<string>();
  for (const name of changed) {
    const st = statOf(root, name);
    if (st === undefined) throw new NotHere();
    const had = byName.get(name);
    if (st === null) {
      if (had) removed.add(name);
      continue;
    }
    const exec = (Number(st.mode) & 0o100) !== 0;
    if (had) {
      // Under core.fileMode=false git keeps the recorded mode: only an unambiguous one is ours to write.
      if (had.mode !== FILE && had.mode !== EXECUTABLE) throw new NotHere();
      if (exec !== (had.mode === EXECUTABLE)) throw new NotHere();
    } else if (exec || insideNestedRepository(root, name)) throw new NotHere();
    files.push({ name, st, mode: had ? had.mode : FILE });
  }
  // New files the ignore rules exclude are left out, as `git add -A` leaves them.
  const fresh = files.filter((f) => !byName.has(f.name));
  if (!req.force && fresh.length > 0) {
    const answer = await req.helpers
      .ignore(root)
      .ask(fresh.map((f) => `${f.name}\0`).join(''), fresh.length * 4)
      .catch(() => {
        throw new NotHere();
      });
    const ignored = new Set<string>();
    for (let i = 0; i < fresh.length; i++) {
      const [source, , pattern, p] = answer.slice(i * 4, i * 4 + 4);
      if (p !== fresh[i]?.name) throw new NotHere();
      if (source !== '' && !(pattern ?? '').startsWith('!')) ignored.add(p ?? '');
    }
    for (let i = files.length - 1; i >= 0; i--) if (ignored.has(files[i]?.name ?? '')) files.splice(i, 1);
  }
  const oids =
    files.length === 0
      ? []
      : await req.helpers
          .hash(root)
          .ask(files.map((f) => `${f.name}\n`).join(''), files.length)
          .catch(() => {
            throw new NotHere();
          });
  if (!oids.every((o) => OID.test(o))) throw new NotHere();
  // From here on, nothing is awaited.
  if (!lockIndex(indexBytes)) return undefined;

  // The new entries: unchanged ones as they were, the changed ones fresh. An unchanged entry that
  // was racily clean (its mtime not older than the index's) would look clean in our newer index
  // without git ever comparing its content: it is smudged. Right after a checkout, every entry is
  // racy; then git's own commands, which compare the contents, make the checkpoint.
  const racyFrom = Math.floor(indexStat.mtimeMs / 1000);
  const touched = new Set([...removed, ...files.map((f) => f.name)]);
  const kept = index.entries.filter((e) => !touched.has(e.name));
  const racy = (e: IndexEntry): boolean => e.mtimeSec >= racyFrom && recordedSize(e) !== 0;
  if (kept.filter(racy).length > MAX_RACY) return undefined;
  const entries = kept.map((e) => (racy(e) ? smudged(e) : e));
  for (const [i, f] of files.entries()) insertSorted(entries, makeEntry(f.name, f.mode, oids[i] ?? '', f.st));
  const affected = new Set<string>(['']);
  for (const p of touched) {
    const segs = p.split('/');
    for (let i = 1; i < segs.length; i++) affected.add(segs.slice(0, i).join('/'));
  }
  const built = buildTree(objects, entries, affected, index.tree);
  const when = req.now ?? new Date();
  const who = signature(when);
  const body = `tree ${built.oid}\nparent ${layout.parent}\nauthor ${who}\ncommitter ${who}\n\ncheckpoint: ${req.label}\n`;
  const oid = writeLooseObject(objects, 'commit', Buffer.from(body, 'utf8'));
  return {
    oid,
    parent: layout.parent,
    index: serializeIndex({ version: index.version, entries, tree: built.node }),
    when,
  };
}

/**
 * What a changed path is now: a regular file's stat, null when it is gone, undefined when it is
 * anything else (a directory, a symlink, reached through a symlink) — git's commands then decide.
 */
function statOf(root: string, name: string): FileStat | null | undefined {
  const abs = path.join(root, name);
  let st;
  try {
    st = lstatSync(abs, { bigint: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
    st = null;
  }
  // Its directories must be real ones: a path through a symlink is not what git stages.
  const dir = path.dirname(abs);
  const realDir = attempt(() => realpathSync(dir));
  if (realDir !== undefined && realDir !== dir) return undefined;
  if (st === null) return null;
  if (!st.isFile()) return undefined;
  return {
    mode: st.mode,
    ctimeNs: st.ctimeNs,
    mtimeNs: st.mtimeNs,
    dev: st.dev,
    ino: st.ino,
    uid: st.uid,
    gid: st.gid,
    size: st.size,
  };
}

interface FileStat extends EntryStat {
  mode: bigint;
}

/** Whether a directory above the new file `name` holds a `.git`: git would stage that repository, not the file. */
function insideNestedRepository(root: string, name: string): boolean {
  const segs = name.split('/');
  for (let i = 1; i < segs.length; i++) {
    if (attempt(() => lstatSync(path.join(root, ...segs.slice(0, i), '.git'))) !== undefined) return true;
  }
  return false;
}

/** Inserts `e` at its place in git's order of names. */
function insertSorted(entries: IndexEntry[], e: IndexEntry): void {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareNames(entries[mid]?.name ?? '', e.name) < 0) lo = mid + 1;
    else hi = mid;
  }
  entries.splice(lo, 0, e);
}

/**
 * The root tree of `entries` (sorted, stage 0), writing the trees of the `affected` directories
 * and taking every other directory's id from the old cache tree — git's `write-tree` over an index
 * whose cache tree is valid outside those directories. Returns the new cache tree with it.
 */
function buildTree(
  objects: string,
  entries: readonly IndexEntry[],
  affected: ReadonlySet<string>,
  old: CacheTree | undefined,
): { oid: string; node: CacheTree } {
  const build = (prefix: string, lo: number, hi: number, was: CacheTree | undefined, name: string): CacheTree => {
    const items: TreeItem[] = [];
    const children: CacheTree[] = [];
    let i = lo;
    while (i < hi) {
      const e = entries[i];
      if (!e) break;
      const rest = e.name.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) {
        items.push({ mode: e.mode.toString(8), name: rest, oid: e.oid });
        i++;
        continue;
      }
      const dir = rest.slice(0, slash);
      const sub = `${prefix}${dir}/`;
      let j = i + 1;
      while (j < hi && (entries[j]?.name ?? '').startsWith(sub)) j++;
      const prev = was?.children.find((c) => c.name === dir);
      const child =
        !affected.has(`${prefix}${dir}`) && prev?.oid && prev.entryCount === j - i ? prev : build(sub, i, j, prev, dir);
      items.push({ mode: '40000', name: dir, oid: child.oid ?? '' });
      children.push(child);
      i = j;
    }
    // A file and a directory of one name (a path that changed from one to the other): git's to sort out.
    const names = new Set<string>();
    for (const it of items) {
      if (names.has(it.name)) throw new NotHere();
      names.add(it.name);
    }
    const oid = writeLooseObject(objects, 'tree', treeBody(items));
    children.sort((a, b) => a.name.length - b.name.length || compareNames(a.name, b.name));
    const node: CacheTree = { name, entryCount: hi - lo, oid, children };
    return node;
  };
  const node = build('', 0, entries.length, old, '');
  return { oid: node.oid ?? '', node };
}

/** Moves HEAD's branch from `parent` to `oid` (lock file, then rename) and appends to both reflogs. */
function moveBranch(layout: Layout, parent: string, oid: string, label: string, when: Date): boolean {
  const refFile = path.join(layout.common, layout.ref);
  const lock = `${refFile}.lock`;
  const fd = attempt(() => openSync(lock, 'wx'));
  if (fd === undefined) return false;
  let moved = false;
  try {
    if (readFileSync(refFile, 'utf8').trim() !== parent) return false;
    writeFileSync(fd, `${oid}\n`);
    closeSync(fd);
    renameSync(lock, refFile);
    moved = true;
  } catch {
    return false;
  } finally {
    if (!moved) {
      attempt(() => closeSync(fd));
      rmSync(lock, { force: true });
    }
  }
  const line = `${parent} ${oid} ${signature(when)}\tcommit: checkpoint: ${label}\n`;
  for (const log of [path.join(layout.gitDir, 'logs', 'HEAD'), path.join(layout.common, 'logs', layout.ref)]) {
    // Git keeps a reflog where one exists (core.logAllRefUpdates made them for the branch and HEAD).
    if (existsSync(log)) appendFileSync(log, line);
  }
  return true;
}

/** Who made a commit or moved a ref, and when, as git writes it: `Name <email> 1733250000 +0100`. */
function signature(when: Date): string {
  return `${COMMIT_IDENTITY.name} <${COMMIT_IDENTITY.email}> ${Math.floor(when.getTime() / 1000)} ${zone(when)}`;
}

/** The local time zone as git writes it: `+0100`, `-0530`. */
function zone(d: Date): string {
  const off = -d.getTimezoneOffset();
  const abs = Math.abs(off);
  return `${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

/**
 * Git's index file (gitformat-index(5)), versions 2 and 3, read and written in process — only as
 * far as a checkpoint of known paths needs it (see fast-checkpoint.ts): the entries, kept as
 * their bytes, and the cache tree (`TREE`). Anything else it meets that it cannot carry over
 * faithfully makes {@link parseIndex} answer undefined, and the caller lets git do the work.
 */
import { createHash } from 'node:crypto';

/** One entry: its name and the fields a checkpoint reads, over its bytes on disk. */
export interface IndexEntry {
  name: string;
  mode: number;
  /** Object id, hex. */
  oid: string;
  /** Stage (0 unless a merge conflict) and whether the entry has v3 extended flags. */
  stage: number;
  extended: boolean;
  /** Seconds of the entry's mtime (for the racy-git smudge). */
  mtimeSec: number;
  raw: Buffer;
}

/** A node of the cache tree: a directory, its entry count (-1 when invalid), its tree id. */
export interface CacheTree {
  name: string;
  entryCount: number;
  oid?: string | undefined;
  children: CacheTree[];
}

export interface GitIndex {
  version: 2 | 3;
  entries: IndexEntry[];
  tree: CacheTree | undefined;
}

const ENTRY_FIXED = 62;
const OID_BYTES = 20;
/** Optional extensions (upper-case signature) that a rewrite may drop: git rebuilds them as needed. */
const DROPPABLE = new Set(['UNTR', 'EOIE', 'IEOT', 'FSMN', 'REUC']);

/**
 * Parses an index (SHA-1 repositories). Undefined for anything a rewrite could not keep exactly:
 * another version, a bad checksum, a split or sparse index, an extension git requires us to
 * understand (lower-case signature) and we do not.
 */
export function parseIndex(buf: Buffer): GitIndex | undefined {
  if (buf.length < 12 + OID_BYTES || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) return undefined;
  const body = buf.subarray(0, buf.length - OID_BYTES);
  const trailer = buf.subarray(buf.length - OID_BYTES);
  // index.skipHash (git 2.40+) writes a null trailer; anything else must be the body's SHA-1.
  if (!trailer.equals(Buffer.alloc(OID_BYTES)) && !createHash('sha1').update(body).digest().equals(trailer))
    return undefined;
  const count = buf.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + ENTRY_FIXED > body.length) return undefined;
    const flags = buf.readUInt16BE(at + 60);
    const extended = (flags & 0x4000) !== 0;
    if (extended && version < 3) return undefined;
    const nameAt = at + ENTRY_FIXED + (extended ? 2 : 0);
    const end = buf.indexOf(0, nameAt);
    if (end < 0 || end >= body.length) return undefined;
    const size = (nameAt - at + (end - nameAt) + 8) & ~7;
    if (at + size > body.length) return undefined;
    entries.push({
      name: buf.toString('utf8', nameAt, end),
      mode: buf.readUInt32BE(at + 24),
      oid: buf.toString('hex', at + 40, at + 60),
      stage: (flags >> 12) & 3,
      extended,
      mtimeSec: buf.readUInt32BE(at + 8),
      raw: buf.subarray(at, at + size),
    });
    at += size;
  }
  let tree: CacheTree | undefined;
  while (at + 8 <= body.length) {
    const sig = buf.toString('latin1', at, at + 4);
    const len = buf.readUInt32BE(at + 4);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (data.length !== len) return undefined;
    if (sig === 'TREE') {
      tree = parseCacheTree(data);
      if (!tree) return undefined;
    } else if (!DROPPABLE.has(sig)) {
      return undefined;
    }
    at += 8 + len;
  }
  if (at !== body.length) return undefined;
  return { version, entries, tree };
}

function parseCacheTree(data: Buffer): CacheTree | undefined {
  let at = 0;
  const node = (): CacheTree | undefined => {
    const nul = data.indexOf(0, at);
    const nl = nul < 0 ? -1 : data.indexOf(0x0a, nul);
    if (nul < 0 || nl < 0) return undefined;
    const m = /^(-?\d+) (\d+)$/.exec(data.toString('latin1', nul + 1, nl));
    if (!m) return undefined;
    const t: CacheTree = { name: data.toString('utf8', at, nul), entryCount: Number(m[1]), children: [] };
    at = nl + 1;
    if (t.entryCount >= 0) {
      if (at + OID_BYTES > data.length) return undefined;
      t.oid = data.toString('hex', at, at + OID_BYTES);
      at += OID_BYTES;
    }
    for (let i = Number(m[2]); i > 0; i--) {
      const c = node();
      if (!c) return undefined;
      t.children.push(c);
    }
    return t;
  };
  const root = node();
  return root && at === data.length ? root : undefined;
}

function writeCacheTree(t: CacheTree, out: Buffer[]): void {
  out.push(Buffer.from(`${t.name}\0${t.entryCount} ${t.children.length}\n`, 'utf8'));
  if (t.entryCount >= 0 && t.oid) out.push(Buffer.from(t.oid, 'hex'));
  for (const c of t.children) writeCacheTree(c, out);
}

/** The index's bytes: header, entries as they are, the cache tree, and the SHA-1 trailer. */
export function serializeIndex(index: GitIndex): Buffer {
  const header = Buffer.alloc(12);
  header.write('DIRC', 0, 'latin1');
  header.writeUInt32BE(index.version, 4);
  header.writeUInt32BE(index.entries.length, 8);
  const parts: Buffer[] = [header, ...index.entries.map((e) => e.raw)];
  if (index.tree) {
    const tree: Buffer[] = [];
    writeCacheTree(index.tree, tree);
    const data = Buffer.concat(tree);
    const ext = Buffer.alloc(8);
    ext.write('TREE', 0, 'latin1');
    ext.writeUInt32BE(data.length, 4);
    parts.push(ext, data);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

/** What an entry records of a file: lstat's fields (as bigints, for nanoseconds) and its blob. */
export interface EntryStat {
  ctimeNs: bigint;
  mtimeNs: bigint;
  dev: bigint;
  ino: bigint;
  uid: bigint;
  gid: bigint;
  size: bigint;
}

const u32 = (n: bigint): number => Number(BigInt.asUintN(32, n));

/** A stage-0 entry for `name` (no extended flags), as git writes it for `git add`. */
export function makeEntry(name: string, mode: number, oid: string, st: EntryStat): IndexEntry {
  const nameBytes = Buffer.from(name, 'utf8');
  const size = (ENTRY_FIXED + nameBytes.length + 8) & ~7;
  const raw = Buffer.alloc(size);
  const sec = (ns: bigint): number => u32(ns / 1_000_000_000n);
  const nsec = (ns: bigint): number => u32(ns % 1_000_000_000n);
  raw.writeUInt32BE(sec(st.ctimeNs), 0);
  raw.writeUInt32BE(nsec(st.ctimeNs), 4);
  raw.writeUInt32BE(sec(st.mtimeNs), 8);
  raw.writeUInt32BE(nsec(st.mtimeNs), 12);
  raw.writeUInt32BE(u32(st.dev), 16);
  raw.writeUInt32BE(u32(st.ino), 20);
  raw.writeUInt32BE(mode, 24);
  raw.writeUInt32BE(u32(st.uid), 28);
  raw.writeUInt32BE(u32(st.gid), 32);
  raw.writeUInt32BE(u32(st.size), 36);
  raw.write(oid, 40, 'hex');
  raw.writeUInt16BE(Math.min(nameBytes.length, 0xfff), 60);
  nameBytes.copy(raw, ENTRY_FIXED);
  return { name, mode, oid, stage: 0, extended: false, mtimeSec: sec(st.mtimeNs), raw };
}

/**
 * The entry with its recorded size set to 0 ("smudged"), so that git compares the file's content
 * instead of trusting its stat data: what git itself does to an entry whose mtime is not older
 * than the index file, when it writes the index again (the racy-git problem, racy-git.txt).
 */
export function smudged(e: IndexEntry): IndexEntry {
  const raw = Buffer.from(e.raw);
  raw.writeUInt32BE(0, 36);
  return { ...e, raw };
}

/** The file size an entry records (0 once smudged: git then compares the content). */
export function recordedSize(e: IndexEntry): number {
  return e.raw.readUInt32BE(36);
}

/** Git's order of index entries: by the bytes of their names. */
export function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

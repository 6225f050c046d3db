/**
 * Loose objects of a SHA-1 repository (gitrepository-layout(5): `objects/xx/yyyy…`, each the
 * zlib-deflated `<type> <size>\0<body>`), read and written in process for fast-checkpoint.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';

export type ObjectType = 'blob' | 'tree' | 'commit';

const loosePath = (objects: string, oid: string): string => path.join(objects, oid.slice(0, 2), oid.slice(2));

/**
 * Writes an object (unless it is there already) and returns its id. Synchronous, as all file work
 * of a fast checkpoint: each asynchronous call is a round trip through libuv's thread pool (~0.2 ms
 * here, against ~20 µs for the call itself), and a checkpoint makes some thirty of them.
 */
export function writeLooseObject(objects: string, type: ObjectType, body: Buffer): string {
  const data = Buffer.concat([Buffer.from(`${type} ${body.length}\0`, 'latin1'), body]);
  const oid = createHash('sha1').update(data).digest('hex');
  const file = loosePath(objects, oid);
  if (existsSync(file)) return oid;
  mkdirSync(path.dirname(file), { recursive: true });
  // Written aside and renamed in, as git does: a reader never sees half an object.
  const tmp = path.join(path.dirname(file), `tmp_obj_${randomBytes(6).toString('hex')}`);
  try {
    writeFileSync(tmp, deflateSync(data), { mode: 0o444 });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return oid;
}

/** A loose object's type and body; undefined when it is not stored loose (packed, or absent). */
export function readLooseObject(objects: string, oid: string): { type: string; body: Buffer } | undefined {
  let raw: Buffer;
  try {
    raw = readFileSync(loosePath(objects, oid));
  } catch {
    return undefined;
  }
  const data = inflateSync(raw);
  const nul = data.indexOf(0);
  const header = /^(\w+) (\d+)$/.exec(data.toString('latin1', 0, Math.max(nul, 0)));
  if (nul < 0 || !header || Number(header[2]) !== data.length - nul - 1) return undefined;
  return { type: header[1] ?? '', body: data.subarray(nul + 1) };
}

/** One entry of a tree object: its mode as git writes it (`100644`, `40000`…), name and id. */
export interface TreeItem {
  mode: string;
  name: string;
  oid: string;
}

/** A tree object's body; `items` must be in git's tree order. */
export function treeBody(items: readonly TreeItem[]): Buffer {
  return Buffer.concat(items.flatMap((i) => [Buffer.from(`${i.mode} ${i.name}\0`, 'utf8'), Buffer.from(i.oid, 'hex')]));
}

/** The tree a commit object's body names. */
export function treeOfCommit(body: Buffer): string | undefined {
  return /^tree ([0-9a-f]{40})\n/.exec(body.toString('latin1', 0, 46))?.[1];
}

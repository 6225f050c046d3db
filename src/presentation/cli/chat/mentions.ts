/**
 * `@path` in a chat line: the file's text (or a folder's listing) goes with the message as an
 * extra part, read by the client from the chat's working directory. The line itself is sent as typed.
 */
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Part } from '../../../protocol/client/index.ts';

/** A file larger than this is refused: a mention is for a file a person would paste, not a data dump. */
export const MAX_MENTION_BYTES = 256 * 1024;
/** A folder's listing shows at most this many entries. */
export const MAX_LISTING = 200;
/** Bytes looked at for a NUL, as git does to call a file binary. */
const BINARY_PROBE = 8000;

/** The `@path` tokens of a line: after a space, a `(` or at the start (so `me@host` is none), trailing punctuation dropped. */
export function mentionsOf(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/(?:^|[\s(])@([^\s@]+)/g)) {
    const token = m[1] ?? '';
    // `@..` and `@.` are paths; a sentence's `.` or `),` after a path is not part of it.
    const path = /^\.+$/.test(token) ? token : token.replace(/[,;:!?)'"]+\.?$|\.$/, '');
    if (path !== '' && !out.includes(path)) out.push(path);
  }
  return out;
}

/** The parts a line's mentions add, or the problems that refuse the line (nothing is sent then). */
export type Mentions = { ok: true; parts: Part[]; paths: string[] } | { ok: false; problems: string[] };

export async function resolveMentions(line: string, cwd: string): Promise<Mentions> {
  const parts: Part[] = [];
  const problems: string[] = [];
  const paths = mentionsOf(line);
  for (const path of paths) {
    const got = await mentionPart(path, cwd);
    if (typeof got === 'string') problems.push(got);
    else parts.push(got);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, parts, paths };
}

/** One mention as a part, or why it is refused. */
export async function mentionPart(path: string, cwd: string): Promise<Part | string> {
  const root = await realpath(cwd);
  const abs = resolve(root, path);
  if (!inside(root, abs)) return `@${path} is outside the chat's directory ${root}: mention files under it`;
  let real: string;
  try {
    real = await realpath(abs);
  } catch {
    return `@${path}: no such file or folder in ${root}`;
  }
  // A symbolic link inside that points out of it is refused as the path itself would be.
  if (!inside(root, real)) return `@${path} leads outside the chat's directory ${root} (a symbolic link)`;
  const st = await stat(real);
  const shown = relative(root, abs) || '.';
  if (st.isDirectory()) return listingPart(shown, real);
  if (!st.isFile()) return `@${path} is not a file or folder`;
  if (st.size > MAX_MENTION_BYTES)
    return `@${path} is ${Math.ceil(st.size / 1024)} KiB; a mention takes files up to ${MAX_MENTION_BYTES / 1024} KiB`;
  const bytes = await readAll(real, st.size);
  if (bytes.subarray(0, BINARY_PROBE).includes(0)) return `@${path} is a binary file; mention text files`;
  return { text: `--- ${shown} ---\n${bytes.toString('utf8')}`, filename: shown, mediaType: 'text/plain' };
}

async function listingPart(shown: string, dir: string): Promise<Part> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  const more = names.length > MAX_LISTING ? [`… and ${names.length - MAX_LISTING} more`] : [];
  const listing = [...names.slice(0, MAX_LISTING), ...more].join('\n');
  const label = shown === '.' ? './' : `${shown}/`;
  return { text: `--- ${label} (folder listing) ---\n${listing}`, filename: label, mediaType: 'text/plain' };
}

async function readAll(path: string, size: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(size);
    const { bytesRead } = await fh.read(buf, 0, size, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

const inside = (root: string, abs: string): boolean => {
  const rel = relative(root, abs);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/**
 * Tab after `@`: the entries of the folder typed so far that start with its last segment
 * (folders with a trailing `/`), hidden ones only when a `.` is typed. `[hits, the @word]`.
 */
export async function completeMention(line: string, cwd: string): Promise<[string[], string]> {
  const m = /(?:^|\s)@([^\s@]*)$/.exec(line);
  if (!m) return [[], line];
  const typed = m[1] ?? '';
  const slash = typed.lastIndexOf('/');
  const dirPart = slash >= 0 ? typed.slice(0, slash + 1) : '';
  const base = slash >= 0 ? typed.slice(slash + 1) : typed;
  const dir = resolve(cwd, dirPart || '.');
  if (!inside(resolve(cwd), dir)) return [[], `@${typed}`];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    const hits = entries
      .filter((e) => e.name.startsWith(base) && (base.startsWith('.') || !e.name.startsWith('.')))
      .map((e) => `@${dirPart}${e.name}${e.isDirectory() ? '/' : ''}`)
      .sort();
    return [hits, `@${typed}`];
  } catch {
    return [[], `@${typed}`];
  }
}

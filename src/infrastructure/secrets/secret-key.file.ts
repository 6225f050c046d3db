/**
 * The server's secret key: 32 random bytes, base64 on one line (what `openssl rand -base64 32`
 * writes, so an administrator may make or restore it by hand), in a file readable by its owner
 * only — `<data dir>/secret.key` unless CLEVERAGENTS_SECRET_KEY_FILE names another. Instances that
 * share a database must share this file: a value sealed with one key does not open with another.
 */
import { constants } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

export const SECRET_KEY_BYTES = 32;
/** 32 bytes in base64: 43 characters and one `=`. */
const KEY_TEXT = /^[A-Za-z0-9+/]{43}=$/;
/** A key file larger than this is not a key file. */
const MAX_KEY_FILE_BYTES = 1024;

/** A key file that exists but cannot be used; `message` names the path, `hint` the fix. */
export class SecretKeyFileError extends Error {
  readonly path: string;
  readonly problem: string;
  readonly hint: string;

  constructor(path: string, problem: string, hint: string) {
    super(`the secret key file ${path} ${problem}`);
    this.path = path;
    this.problem = problem;
    this.hint = hint;
    this.name = 'SecretKeyFileError';
  }
}

const errno = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? 'error';

/** The key in the file; undefined when there is no file. Throws {@link SecretKeyFileError} for one that cannot be used. */
export async function readSecretKeyFile(path: string): Promise<Buffer | undefined> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO in its place must not block the open.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw new SecretKeyFileError(path, `cannot be opened (${errno(err)})`, 'check the file and its directory');
  }
  try {
    const st = await handle.stat();
    if (!st.isFile())
      throw new SecretKeyFileError(path, 'is not a regular file', 'put the key file (one line of base64) there');
    if ((st.mode & 0o077) !== 0)
      throw new SecretKeyFileError(
        path,
        `may be read or written by group or others (mode ${(st.mode & 0o777).toString(8)})`,
        `run chmod 600 ${path}`,
      );
    const text = st.size > MAX_KEY_FILE_BYTES ? '' : (await handle.readFile('utf8')).trim();
    if (!KEY_TEXT.test(text))
      throw new SecretKeyFileError(
        path,
        `is not a key: it must hold ${SECRET_KEY_BYTES} random bytes in base64 on one line (as \`openssl rand -base64 32\` writes)`,
        "restore the server's key file; a new key makes every stored secret unreadable (they must be set again)",
      );
    return Buffer.from(text, 'base64');
  } catch (err) {
    if (err instanceof SecretKeyFileError) throw err;
    throw new SecretKeyFileError(path, `cannot be read (${errno(err)})`, 'check the file');
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * The key in the file, made first when there is none. A new key is written to a private
 * temporary file (O_EXCL, mode 0600) and linked into place, which fails if another process (an
 * instance sharing the data directory) got there first — then that one's key is read. So a key
 * file is never seen half written, and two instances never end up with two keys.
 */
export async function readOrCreateSecretKeyFile(path: string): Promise<Buffer> {
  const existing = await readSecretKeyFile(path);
  if (existing) return existing;
  const key = randomBytes(SECRET_KEY_BYTES);
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeNew(tmp, key);
    try {
      await link(tmp, path);
    } catch (err) {
      if (errno(err) === 'EEXIST') return await readKeyOrFail(path);
      throw err;
    }
    return key;
  } catch (err) {
    if (err instanceof SecretKeyFileError) throw err;
    throw new SecretKeyFileError(
      path,
      `cannot be created (${errno(err)})`,
      `check that ${dirname(path)} exists and is writable by the server, or make the key yourself: (umask 077; openssl rand -base64 32 > ${path})`,
    );
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function writeNew(path: string, key: Buffer): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    // The umask can only take bits away from 0600; set it anyway, as the mode is the point.
    await handle.chmod(0o600);
    await handle.writeFile(`${key.toString('base64')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readKeyOrFail(path: string): Promise<Buffer> {
  const key = await readSecretKeyFile(path);
  if (!key) throw new SecretKeyFileError(path, 'vanished while it was being read', 'try again');
  return key;
}

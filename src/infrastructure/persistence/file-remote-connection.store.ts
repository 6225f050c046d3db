import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RemoteConnection, RemoteConnectionStore } from '../../application/index.ts';
import { AppError, messageOf } from '../../domain/errors.ts';

/**
 * The server a local setup syncs with, in `<dataDir>/remote.json`: readable by its owner only
 * (it holds the credential), written atomically (a temporary file renamed over it).
 */
export class FileRemoteConnectionStore implements RemoteConnectionStore {
  readonly file: string;

  private readonly dataDir: string;

  constructor(dataDir: string) {
    this.dataDir = dataDir;
    this.file = join(dataDir, 'remote.json');
  }

  async get(): Promise<RemoteConnection | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const v = JSON.parse(text) as Partial<RemoteConnection>;
      if (typeof v.url !== 'string' || typeof v.token !== 'string' || typeof v.user !== 'string')
        throw new Error('url, token and user are required');
      return { ...v, url: v.url, token: v.token, user: v.user, autoPullSeconds: Number(v.autoPullSeconds ?? 0) };
    } catch (err) {
      throw new AppError('INVALID_STATE', `${this.file} is not a valid connection record: ${messageOf(err)}`, {
        hint: 'run `agents server disconnect`, then `agents server connect URL` again',
      });
    }
  }

  async set(connection: RemoteConnection): Promise<void> {
    await mkdir(this.dataDir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, `${JSON.stringify(connection, null, 2)}\n`, { mode: 0o600 });
      await chmod(tmp, 0o600);
      await rename(tmp, this.file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async clear(): Promise<boolean> {
    const had = (await this.get().catch(() => ({}))) !== undefined;
    await rm(this.file, { force: true });
    return had;
  }
}

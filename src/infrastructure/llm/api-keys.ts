/**
 * Where an actor's API key is: the environment variable named by apiKeyEnv, or the file named by
 * apiKeyFile (readable by its owner only, like an ssh key). The key is returned to the caller that
 * sends the request and appears in no message.
 */
import { open } from 'node:fs/promises';
import { constants } from 'node:fs';
import type { ActorDefinition } from '../../domain/registry/entities.js';
import type { ApiKeys, ApiKeyStatus } from '../../application/index.js';

/** A key file larger than this is not a key file. */
const MAX_KEY_FILE_BYTES = 16 * 1024;

export interface EnvFileApiKeysOptions {
  env: NodeJS.ProcessEnv;
}

export class EnvFileApiKeys implements ApiKeys {
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: EnvFileApiKeysOptions) {
    this.env = options.env;
  }

  async resolve(actor: ActorDefinition): Promise<ApiKeyStatus> {
    if (actor.apiKeyEnv !== undefined) {
      const source = `env ${actor.apiKeyEnv}`;
      const key = this.env[actor.apiKeyEnv]?.trim();
      if (!key) return { present: false, source, problem: `${actor.apiKeyEnv} is not set` };
      return { present: true, key, source };
    }
    if (actor.apiKeyFile !== undefined) return readKeyFile(actor.apiKeyFile);
    return { present: false, problem: 'no apiKeyEnv or apiKeyFile' };
  }
}

async function readKeyFile(path: string): Promise<ApiKeyStatus> {
  const source = `file ${path}`;
  const absent = (problem: string): ApiKeyStatus => ({ present: false, source, problem });
  let handle;
  try {
    // O_NONBLOCK: a FIFO in its place must not block the open.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return absent(`the key file ${path} does not exist`);
    if (code === 'EACCES') return absent(`the key file ${path} cannot be read (permission denied)`);
    return absent(`the key file ${path} cannot be opened (${code ?? 'error'})`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return absent(`the key file ${path} is not a regular file`);
    if ((st.mode & 0o077) !== 0)
      return absent(
        `the key file ${path} is readable by others (mode ${(st.mode & 0o777).toString(8)}): run chmod 600 ${path}`,
      );
    if (st.size > MAX_KEY_FILE_BYTES) return absent(`the key file ${path} is larger than 16 KiB: it is not a key file`);
    const buf = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    if (bytesRead > MAX_KEY_FILE_BYTES)
      return absent(`the key file ${path} is larger than 16 KiB: it is not a key file`);
    const key = buf.subarray(0, bytesRead).toString('utf8').trim();
    if (key === '') return absent(`the key file ${path} is empty`);
    return { present: true, key, source };
  } catch (err) {
    return absent(`the key file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Where an actor's API key is: the environment variable named by apiKeyEnv, the file named by
 * apiKeyFile (readable by its owner only, like an ssh key), or the secret of the actor's own
 * namespace named by apiKeySecret. The key is returned to the caller that sends the request and
 * appears in no message.
 */
import { open } from 'node:fs/promises';
import { constants } from 'node:fs';
import type { ActorDefinition } from '../../domain/registry/actor.definition.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import type { ApiKeys, ApiKeyStatus } from '../../application/index.ts';
import { messageOf } from '../../domain/errors.ts';

/** A key file larger than this is not a key file. */
const MAX_KEY_FILE_BYTES = 16 * 1024;

/** A secret's value in a namespace's secret store; undefined when there is no such secret. */
export type SecretLookup = (namespace: string, name: string) => Promise<string | undefined>;

export interface EnvFileApiKeysOptions {
  env: NodeJS.ProcessEnv;
  /** The secret store (absent: an actor naming apiKeySecret finds no key, and is told why). */
  secret?: SecretLookup | undefined;
}

export class EnvFileApiKeys implements ApiKeys {
  private readonly env: NodeJS.ProcessEnv;
  private readonly secret: SecretLookup | undefined;

  constructor(options: EnvFileApiKeysOptions) {
    this.env = options.env;
    this.secret = options.secret;
  }

  async resolve(actor: ActorDefinition): Promise<ApiKeyStatus> {
    if (actor.apiKeyEnv !== undefined) {
      const source = `env ${actor.apiKeyEnv}`;
      const key = this.env[actor.apiKeyEnv]?.trim();
      if (!key) return { present: false, source, problem: `${actor.apiKeyEnv} is not set` };
      return { present: true, key, source };
    }
    if (actor.apiKeyFile !== undefined) return readKeyFile(actor.apiKeyFile);
    if (actor.apiKeySecret !== undefined) return this.readSecret(actor.apiKeySecret, namespaceOf(actor.name));
    return { present: false, problem: 'no apiKeyEnv, apiKeyFile or apiKeySecret' };
  }

  /** The secret of the actor's own namespace: an actor cannot name another namespace's. */
  private async readSecret(name: string, namespace: string): Promise<ApiKeyStatus> {
    const source = `secret ${name}`;
    if (!this.secret) return { present: false, source, problem: 'this agent keeps no secrets' };
    let value: string | undefined;
    try {
      value = await this.secret(namespace, name);
    } catch (err) {
      // Says which secret and what to do (set it again); never the value, which was not read.
      return { present: false, source, problem: messageOf(err) };
    }
    if (value === undefined)
      return {
        present: false,
        source,
        problem: `namespace ${namespace} has no secret ${name} (set it: agents secret set ${name} --namespace ${namespace})`,
      };
    return { present: true, key: value, source };
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

/**
 * Secret values sealed with AES-256-GCM under the server's key (node:crypto): a fresh 12-byte IV
 * per write, the secret's `namespace/name` as additional authenticated data (a ciphertext copied
 * to another row does not open), stored as `v1:<iv>:<tag>:<ciphertext>` (base64 parts) so that
 * another scheme can follow without reading the old one wrongly.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import { SecretUnreadable, type Logger, type SecretCipher } from '../../application/index.ts';
import { readOrCreateSecretKeyFile, readSecretKeyFile, SecretKeyFileError } from './secret-key.file.ts';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface AesGcmSecretCipherOptions {
  /** The key file (made on first need). */
  keyFile: string;
  /**
   * Whether a key file problem names the file to the caller: yes for the local user (their own
   * machine); no on a server, whose paths are not its users' business (the log has it).
   */
  showPath: boolean;
  logger: Logger;
}

export class AesGcmSecretCipher implements SecretCipher {
  /** The key once read (an absent file is asked again next time: another instance may make it). */
  private key: Promise<Buffer> | undefined;

  private readonly opts: AesGcmSecretCipherOptions;

  constructor(opts: AesGcmSecretCipherOptions) {
    this.opts = opts;
  }

  /** Reads the key when its file exists (making it first when `create`): a bad file is found at start. */
  async ready(opts: { create: boolean }): Promise<void> {
    if (opts.create) await this.theKey(true);
    else await readSecretKeyFile(this.opts.keyFile);
  }

  async seal(value: string, binding: string): Promise<string> {
    const key = await this.theKey(true);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), sealed]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64')))
      .join(':');
  }

  async open(text: string, binding: string): Promise<string> {
    const parts = text.split(':');
    const [version, ...rest] = parts;
    if (version !== VERSION || rest.length !== 3 || !rest.every((p) => B64.test(p)))
      throw new SecretUnreadable('format');
    const [iv, tag, sealed] = rest.map((p) => Buffer.from(p, 'base64')) as [Buffer, Buffer, Buffer];
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretUnreadable('format');
    const key = await this.theKey(false);
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadable('authentication');
    }
  }

  /** The key, read once; made when `create` and there is no file. A file that cannot be used is refused, clearly. */
  private async theKey(create: boolean): Promise<Buffer> {
    if (this.key) return this.key;
    try {
      const found = create
        ? await readOrCreateSecretKeyFile(this.opts.keyFile)
        : await readSecretKeyFile(this.opts.keyFile);
      if (!found) throw new SecretUnreadable('no-key');
      this.key = Promise.resolve(found);
      return found;
    } catch (err) {
      if (!(err instanceof SecretKeyFileError)) throw err;
      this.opts.logger.error({ err: err.message, hint: err.hint }, 'the secret key file cannot be used');
      throw new AppError(
        'UNAVAILABLE',
        this.opts.showPath
          ? `Secrets cannot be used: ${err.message}`
          : "Secrets cannot be used: the server's secret key file is unusable (its log says why)",
        { hint: this.opts.showPath ? err.hint : 'ask a server administrator to fix the secret key file' },
      );
    }
  }
}

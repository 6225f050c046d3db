import { AuditService, SecretService, type Logger } from '../application/index.ts';
import { AesGcmSecretCipher, SecretKeyFileError, type Storage } from '../infrastructure/index.ts';
import { StartupError } from './startup-errors.ts';

/**
 * Namespaces' secrets, sealed with the key in `keyFile`. A key file that is there but cannot be
 * used stops the start (one line with the fix); a missing one is made when the first secret is set.
 * On a server (`showPath: false`) a later key problem does not tell users the server's paths.
 */
export async function openSecrets(opts: {
  storage: Storage;
  keyFile: string;
  showPath: boolean;
  logger: Logger;
}): Promise<SecretService> {
  const cipher = new AesGcmSecretCipher({ keyFile: opts.keyFile, showPath: opts.showPath, logger: opts.logger });
  try {
    await cipher.ready({ create: false });
  } catch (err) {
    if (err instanceof SecretKeyFileError) throw new StartupError(err.message, err.hint);
    throw err;
  }
  return new SecretService({
    store: opts.storage.secrets,
    cipher,
    audit: new AuditService(opts.storage.audit, opts.logger),
  });
}

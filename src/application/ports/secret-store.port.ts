/**
 * A namespace's secrets (`agents secret set NAME`): values an actor names instead of a host
 * environment variable or file (its `apiKeySecret`). The store keeps only ciphertexts; the cipher
 * holds the server's key. Neither ever logs or returns a value to a client.
 */

/** One stored secret: its ciphertext, never its value. */
export interface StoredSecret {
  namespace: string;
  name: string;
  /** The sealed value (`v1:<iv>:<tag>:<ciphertext>`, base64 parts). */
  ciphertext: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** What a list shows of a secret: when and by whom, never the value. */
export interface SecretSummary {
  name: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** How a write ended: a new secret, or a new value of one that was there (created by someone before). */
export interface SecretWrite {
  created: boolean;
  createdAt: string;
  createdBy: string;
}

/** The namespace_secrets table. */
export interface SecretStore {
  /**
   * Stores a new secret or a new value of one (its creator and creation time kept). Throws
   * NOT_FOUND (the namespace's answer) when the namespace does not exist.
   */
  put(secret: StoredSecret): Promise<SecretWrite>;
  get(namespace: string, name: string): Promise<StoredSecret | undefined>;
  /** The namespace's secrets, by name. */
  list(namespace: string): Promise<SecretSummary[]>;
  count(namespace: string): Promise<number>;
  /** Whether there was one to remove. */
  remove(namespace: string, name: string): Promise<boolean>;
}

/**
 * Seals and opens secret values with the server's key. `binding` (`namespace/name`) is
 * authenticated with the value: a ciphertext copied to another row does not open.
 */
export interface SecretCipher {
  seal(value: string, binding: string): Promise<string>;
  /** The value; throws {@link SecretUnreadable} when the text does not open with this key and binding. */
  open(ciphertext: string, binding: string): Promise<string>;
  /** Loads (or, when asked, creates) the key now, so that a bad key file stops a start. */
  ready(opts: { create: boolean }): Promise<void>;
}

/**
 * A stored ciphertext that does not open: the server's key was replaced (or this instance has
 * another key file than the one that wrote it), the row was moved, or the text was damaged. The
 * message completes "The secret NAME of namespace NS …".
 */
export class SecretUnreadable extends Error {
  readonly why: 'format' | 'authentication' | 'no-key';

  constructor(why: 'format' | 'authentication' | 'no-key') {
    super(
      why === 'format'
        ? 'is stored in a form this server does not read'
        : why === 'no-key'
          ? 'cannot be read: the server has no secret key file any more'
          : "does not decrypt with this server's key (the key file was replaced, or this instance has another one than the instance that stored it)",
    );
    this.why = why;
    this.name = 'SecretUnreadable';
  }
}

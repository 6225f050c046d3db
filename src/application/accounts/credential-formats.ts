import { createHash } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import type { UserRecord } from '../ports/account.repository.port.ts';
import type { Principal } from '../ports/principal.ts';

/** `ca_<12 lowercase letters/digits: the lookup id>_<43 base64url characters: the secret>`. */
export const API_KEY = /^(ca_[a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/** A user or namespace name: lowercase letters, digits, - and _, starting with a letter. */
export const SEGMENT = /^[a-z][a-z0-9_-]{0,62}$/;
/** Names no user may have (the bootstrap admin is the one `admin`). */
export const RESERVED_USER_NAMES: readonly string[] = ['builtin', 'local', 'system', 'internal', 'admin', 'root'];

/**
 * The public lookup id of a string shaped as one of our API keys (`ca_<id>_<secret>`), else
 * undefined. The id is not a secret (it names the key in `agents key list` and the audit log).
 */
export function apiKeyId(presented: string): string | undefined {
  return API_KEY.exec(presented)?.[1];
}

/** A bearer token shaped as a JWT (three base64url segments) is verified as one, never as a key. */
export const isJwtShaped = (presented: string): boolean => JWT.test(presented);

export const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The lookup id of a legacy server token (any other string presented as a bearer token). */
export function serverTokenId(token: string): string {
  return serverTokenIdOf(sha256(token));
}

/** {@link serverTokenId} from the token's SHA-256, when the caller has it already. */
export const serverTokenIdOf = (digest: Buffer): string => `st_${digest.toString('hex', 0, 8)}`;

/** A credential found valid: its principal, whether it may be reused, and until when. */
export interface Checked {
  principal: Principal;
  reusable: boolean;
  expiresAt: number | undefined;
}

export function unauthenticated(message: string, hint: string, reason: string): AppError {
  return new AppError('UNAUTHENTICATED', `Authentication failed: ${message}`, { hint, details: { reason } });
}

export function disabled(user: UserRecord, credential: string): AppError {
  return new AppError('UNAUTHENTICATED', `Authentication failed: user ${user.name} is disabled`, {
    hint: 'ask a server administrator to enable the user (`agents user enable`)',
    details: { reason: 'user disabled', credential, user: user.name },
  });
}

/** A bounded map that forgets its oldest entries first. */
export class Bounded<V> {
  private readonly map = new Map<string, V>();
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }
  get(k: string): V | undefined {
    return this.map.get(k);
  }
  set(k: string, v: V): void {
    this.map.delete(k);
    this.map.set(k, v);
    while (this.map.size > this.max) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.map.delete(oldest.value);
    }
  }
  delete(k: string): void {
    this.map.delete(k);
  }
  has(k: string): boolean {
    return this.map.has(k);
  }
}

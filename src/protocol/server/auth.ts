import { hash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../application/index.js';
import { AppError } from '../../domain/errors.js';

/** Turns request credentials into a principal, or refuses them. */
export interface Authenticator {
  authenticate(authorization: string | undefined): Principal;
}

// The one-shot hash costs a fraction of createHash()'s object setup, on every request.
const digest = (s: string): Buffer => hash('sha256', s, 'buffer');

/**
 * The server token: one bearer token that stands for the machine's owner. Compared in constant
 * time. Full multi-user auth (API keys, JWT) plugs in behind the same interface.
 */
export class BearerTokenAuthenticator implements Authenticator {
  private readonly expected: Buffer;

  constructor(
    token: string,
    private readonly principal: Principal,
  ) {
    if (token.length < 16) throw new Error('the server token must be at least 16 characters');
    this.expected = digest(token);
  }

  authenticate(authorization: string | undefined): Principal {
    if (!authorization) {
      throw new AppError('UNAUTHENTICATED', 'Authentication required: send Authorization: Bearer <token>', {
        hint: 'the token is in CLEVERAGENTS_SERVER_TOKEN or the file `agents serve` printed on first start',
      });
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m || !timingSafeEqual(digest(m[1] ?? ''), this.expected)) {
      throw new AppError('UNAUTHENTICATED', 'Authentication failed: the bearer token is not valid', {
        hint: 'check the token you passed with --token or CLEVERAGENTS_SERVER_TOKEN',
      });
    }
    return this.principal;
  }
}

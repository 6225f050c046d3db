import { AppError } from '../../domain/errors.ts';
import type { Principal } from '../ports/principal.ts';

const LOCAL_MODE_HINT = 'run `agents serve` for a server, then `agents login --server URL`';

/** Users and keys exist on a server only: local mode has its one user and no credentials. */
export function requireServerMode(by: Principal): void {
  if (by.kind === 'local')
    throw new AppError(
      'UNSUPPORTED_OPERATION',
      'local mode has one user and no keys; run `agents serve` for a server',
      { hint: LOCAL_MODE_HINT },
    );
}

/** A server's administrators manage its users and other users' keys; `what` names the refused act. */
export function requireServerAdmin(by: Principal, what: string): void {
  requireServerMode(by);
  if (!by.admin)
    throw new AppError('FORBIDDEN', `Only server administrators may ${what}`, {
      hint: 'ask a server administrator (see `agents whoami`)',
    });
}

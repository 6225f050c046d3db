import { AppError } from '../../domain/errors.ts';
import type { Principal } from '../ports/principal.ts';
import type { Row } from './sync.types.ts';

export const NOT_LOCAL = (): AppError =>
  new AppError('UNSUPPORTED_OPERATION', 'sync runs in a local setup, not on a server', {
    hint: 'on your machine: agents server connect URL, then agents sync status',
  });

export const NOT_CONNECTED = (): AppError =>
  new AppError('INVALID_STATE', 'This local setup is not connected to a server', {
    hint: 'connect it first: agents server connect URL --token KEY',
  });

export const LOCAL_STAYS = (): AppError =>
  new AppError('INVALID_PARAMS', 'local/ never leaves this machine: it is not pulled or pushed', {
    fields: [{ field: 'namespaces', description: 'name namespaces you share on the server (not local or builtin)' }],
    hint: 'move what you want to share into a shared namespace (see `agents sync status`)',
  });

/** Sync runs only for the local user of a local setup. */
export function assertLocal(principal: Principal): void {
  if (principal.kind !== 'local') throw NOT_LOCAL();
}

/** The refusal of a pull or push that would overwrite changes made on both sides. */
export function conflictError(op: 'pull' | 'push', rows: Row[]): AppError {
  const list = rows
    .map(
      (r) =>
        `${r.status.kind} ${r.status.name} (local revision ${r.local?.revision ?? '-'}, server revision ${
          r.server?.revision ?? '-'
        }, last synced at server revision ${r.base?.revision ?? 'never'})`,
    )
    .join('; ');
  return new AppError('REVISION_CONFLICT', `${op} refused: changed on both sides: ${list}; nothing was written`, {
    details: {
      conflicts: rows.map((r) => ({
        kind: r.status.kind,
        name: r.status.name,
        localRevision: r.local?.revision ?? null,
        serverRevision: r.server?.revision ?? null,
        baseRevision: r.base?.revision ?? null,
      })),
    },
    hint:
      op === 'pull'
        ? 'keep the server version with `agents sync pull --force` (it overwrites the local one), or push yours with `agents sync push --force`'
        : 'keep yours with `agents sync push --force` (it overwrites the server version), or take the server one with `agents sync pull --force`',
  });
}

import { AUTH_CHANGES_CHANNEL } from '../migrations/0019.ts';
import type { PgDatabase } from './pg-database.ts';

/** What may change a principal, as this process knows it (see {@link pgAuthChangesOf}). */
export interface PgAuthChanges {
  /** A number that changes whenever a principal may have changed (AccountRepository.authVersion). */
  version(): number;
  /** This process wrote to an account table: the change counts at once, before its notification. */
  changed(): void;
}

/** One tracker per database: every repository of the process writing account tables shares it. */
const trackers = new WeakMap<PgDatabase, PgAuthChanges>();

/**
 * PostgreSQL's counterpart of SQLite's `authChangesOf`: triggers on the account tables (migration
 * 0019) notify `ca_auth_changes` on every committed write, from any instance, and each
 * notification (and each reconnection of the listener, after which the handlers are called
 * because notifications were lost meanwhile) moves the version. While the listener is not
 * connected — not yet, or lost — no notification can arrive, so the version moves on every call:
 * nothing is reused and every request is authenticated in full, which keeps a revocation made
 * elsewhere effective at once.
 */
export function pgAuthChangesOf(db: PgDatabase): PgAuthChanges {
  const known = trackers.get(db);
  if (known) return known;
  let version = 0;
  let connected = false;
  let subscribing: Promise<unknown> | undefined;
  const subscribe = (): void => {
    subscribing ??= db
      .listen(AUTH_CHANGES_CHANNEL, () => {
        version++;
      })
      .catch(() => {
        // Tried again on the next request; meanwhile every request is authenticated in full (and
        // reads the database, whose failure that request reports).
        subscribing = undefined;
      });
  };
  const tracker: PgAuthChanges = {
    version() {
      if (!db.isListening(AUTH_CHANGES_CHANNEL)) {
        connected = false;
        subscribe();
        return ++version;
      }
      // A grant read while nothing listened may have missed a change: the first look once
      // connected moves the version past it.
      if (!connected) {
        connected = true;
        version++;
      }
      return version;
    },
    changed() {
      version++;
    },
  };
  trackers.set(db, tracker);
  return tracker;
}

import { AppError, messageOf } from '../../domain/errors.ts';
import type { Role } from '../../domain/permissions.ts';
import type { Principal } from '../ports/principal.ts';
import { assertLocal } from './sync.errors.ts';
import { SyncPull } from './sync-pull.service.ts';
import { SyncPush } from './sync-push.service.ts';
import { SyncSnapshots } from './sync-snapshots.service.ts';
import { isShared, type SyncEntityStatus } from './sync-state.ts';
import type { ConnectInput, PullInput, SyncDeps, SyncInput, SyncResult } from './sync.types.ts';

/**
 * Sync between this local store and one server: the registry definitions of the user's shared
 * namespaces (never local/ or builtin/), compared by revision and content hash. Conflicts are
 * refused unless forced; nothing is overwritten silently; a resource's path is per machine.
 */
export class SyncService {
  private readonly now: () => Date;
  /** Pulls and pushes of this process run one after the other (an auto-pull and a request's pull never race). */
  private queue: Promise<unknown> = Promise.resolve();

  private readonly deps: SyncDeps;
  private readonly snapshots: SyncSnapshots;
  private readonly pulls: SyncPull;
  private readonly pushes: SyncPush;

  constructor(deps: SyncDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
    this.snapshots = new SyncSnapshots(deps);
    this.pulls = new SyncPull(deps, this.now);
    this.pushes = new SyncPush(deps, this.now);
  }

  async connect(
    input: ConnectInput,
    principal: Principal,
  ): Promise<{ url: string; user: string; namespaces: Array<{ name: string; role: Role }>; autoPullSeconds: number }> {
    assertLocal(principal);
    const remote = this.deps.remotes({ url: input.url, token: input.token });
    try {
      const who = await remote.whoami();
      const shared = who.namespaces.filter((n) => isShared(n.name));
      if (input.namespace !== undefined && !shared.some((n) => n.name === input.namespace))
        throw new AppError('NOT_FOUND', `Namespace ${input.namespace} was not found on ${input.url}`, {
          details: { entity: 'namespace', name: input.namespace },
          hint: `your namespaces there: ${shared.map((n) => n.name).join(', ') || 'none (ask an admin to add you)'}`,
        });
      const previous = await this.deps.connection.get().catch(() => undefined);
      // The user's shared namespaces exist here too, so their entities can be written locally and pushed.
      await this.pulls.ensureNamespaces(
        shared.map((n) => n.name).filter((n) => input.namespace === undefined || n === input.namespace),
      );
      const autoPullSeconds = input.autoPullSeconds ?? 300;
      await this.deps.connection.set({
        url: input.url,
        token: input.token,
        user: who.user,
        namespace: input.namespace,
        autoPullSeconds,
        paths: previous?.url === input.url ? previous.paths : undefined,
        lastPullAt: previous?.url === input.url ? previous.lastPullAt : undefined,
      });
      return { url: input.url, user: who.user, namespaces: shared, autoPullSeconds };
    } finally {
      await remote.close().catch(() => {});
    }
  }

  async disconnect(principal: Principal): Promise<{ disconnected: boolean; url?: string | undefined }> {
    assertLocal(principal);
    const c = await this.deps.connection.get().catch(() => undefined);
    const had = await this.deps.connection.clear();
    return { disconnected: had, url: c?.url };
  }

  /** The connection (never its token) and where each shared entity stands. */
  async status(
    input: { namespaces?: string[] | undefined },
    principal: Principal,
  ): Promise<{
    connection: {
      url: string;
      user: string;
      namespace?: string | undefined;
      autoPullSeconds: number;
      lastPullAt?: string | undefined;
    };
    namespaces: Array<{ name: string; role: Role }>;
    entities: SyncEntityStatus[];
  }> {
    const snap = await this.snapshots.take(input.namespaces, principal);
    try {
      const c = snap.connection;
      return {
        connection: {
          url: c.url,
          user: c.user,
          namespace: c.namespace,
          autoPullSeconds: c.autoPullSeconds,
          lastPullAt: c.lastPullAt,
        },
        namespaces: snap.namespaces.map((name) => ({ name, role: snap.roles.get(name) ?? 'viewer' })),
        entities: snap.rows.map((r) => r.status),
      };
    } finally {
      await snap.remote.close().catch(() => {});
    }
  }

  /** Just the connection, without asking the server (`agents server status`). */
  async connection(principal: Principal): Promise<{
    connected: boolean;
    url?: string | undefined;
    user?: string | undefined;
    namespace?: string | undefined;
    autoPullSeconds?: number | undefined;
    lastPullAt?: string | undefined;
    paths?: Record<string, string> | undefined;
  }> {
    assertLocal(principal);
    const c = await this.deps.connection.get();
    if (!c) return { connected: false };
    return {
      connected: true,
      url: c.url,
      user: c.user,
      namespace: c.namespace,
      autoPullSeconds: c.autoPullSeconds,
      lastPullAt: c.lastPullAt,
      paths: c.paths,
    };
  }

  /** Writes what the server has newer here; refuses conflicts unless forced (then reports them). */
  pull(input: PullInput, principal: Principal): Promise<SyncResult> {
    return this.exclusive(async () => {
      const snap = await this.snapshots.take(input.namespaces, principal);
      try {
        return await this.pulls.run(snap, input);
      } finally {
        await snap.remote.close().catch(() => {});
      }
    });
  }

  /** Writes what changed here to the server where the user may write; conflicts refused unless forced. */
  push(input: SyncInput, principal: Principal): Promise<SyncResult> {
    return this.exclusive(async () => {
      const snap = await this.snapshots.take(input.namespaces, principal);
      try {
        return await this.pushes.run(snap, input);
      } finally {
        await snap.remote.close().catch(() => {});
      }
    });
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Pulls (never forced) now if the last pull is older than the interval, then every interval
   * while the process lives (an unref'd timer). Errors are logged, never thrown. `first` settles
   * when the check at start is done.
   */
  startAutoPull(): { stop: () => void; first: Promise<void> } {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const run = async (): Promise<void> => {
      const c = await this.deps.connection.get().catch(() => undefined);
      if (stopped || !c || c.autoPullSeconds <= 0) return;
      const last = c.lastPullAt ? Date.parse(c.lastPullAt) : 0;
      if (this.now().getTime() - last >= c.autoPullSeconds * 1000) {
        try {
          const r = await this.pull({}, await this.deps.namespaces.localPrincipal());
          this.deps.logger.info({ written: r.written.length, skipped: r.skipped.length }, 'auto-pull done');
        } catch (err) {
          this.deps.logger.warn({ err: messageOf(err) }, 'auto-pull failed');
        }
      }
      if (!stopped) {
        timer = setTimeout(() => void run().catch(() => {}), c.autoPullSeconds * 1000);
        timer.unref();
      }
    };
    const first = run().catch((err: unknown) => this.deps.logger.warn({ err: messageOf(err) }, 'auto-pull failed'));
    return {
      first,
      stop: () => {
        stopped = true;
        if (timer) clearTimeout(timer);
      },
    };
  }
}

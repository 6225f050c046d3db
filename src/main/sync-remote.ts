import type { RemoteEntity, RemoteWriteResult, SyncRemote, SyncRemoteFactory } from '../application/index.ts';
import { AppError, ERROR_REASONS, type ErrorReason } from '../domain/errors.ts';
import type { RegistryKind } from '../domain/registry/entities.ts';
import { namespaceList } from '../protocol/a2a/contracts/namespace.contract.ts';
import { REGISTRIES } from '../protocol/a2a/contracts/registry.contract.ts';
import { A2AClient, A2AClientError, A2ATransportError } from '../protocol/client/index.ts';
import { METHOD_NOT_FOUND } from '../protocol/jsonrpc/codes.ts';

/** What the registry methods answer, as far as sync reads it (the contracts say more). */
interface Stored {
  name: string;
  namespace: string;
  revision: number;
  contentHash: string;
  builtin: boolean;
  definition: unknown;
}
interface Page {
  items: Stored[];
  nextPageToken: string;
}

/** At most this many pages of one kind are read (500 a page). */
const MAX_PAGES = 200;

/**
 * The server a local agent syncs with, over HTTP as an ordinary A2A client: its registry methods
 * (list with revision and hash, add, update with expectedRevision), whoami and namespace/list.
 */
export const httpSyncRemote: SyncRemoteFactory = ({ url, token }) => new HttpSyncRemote(url, token);

class HttpSyncRemote implements SyncRemote {
  private readonly client: A2AClient;

  private readonly url: string;

  constructor(url: string, token: string) {
    this.url = url;
    this.client = A2AClient.remote({ url, token });
  }

  async whoami(): Promise<{
    user: string;
    namespaces: Array<{ name: string; role: 'owner' | 'admin' | 'member' | 'viewer' }>;
  }> {
    return this.guard(async () => {
      try {
        const who = (await this.client.raw('_cleveragents/whoami', {})) as {
          user?: unknown;
          namespaces?: Array<{ name: string; role: 'owner' | 'admin' | 'member' | 'viewer' }>;
        };
        if (typeof who.user === 'string' && Array.isArray(who.namespaces))
          return { user: who.user, namespaces: who.namespaces };
      } catch (err) {
        // A server without whoami (before extension 1.3): its namespace list says enough.
        if (!(err instanceof A2AClientError && err.code === METHOD_NOT_FOUND)) throw err;
      }
      const list = await this.client.call(namespaceList, {});
      const owned = list.namespaces.find((n) => n.role === 'owner' && !n.builtin);
      return {
        user: owned?.owner ?? 'unknown',
        namespaces: list.namespaces.filter((n) => !n.builtin).map((n) => ({ name: n.name, role: n.role })),
      };
    });
  }

  async list(kind: RegistryKind, namespaces: readonly string[]): Promise<RemoteEntity[]> {
    return this.guard(async () => {
      const out: RemoteEntity[] = [];
      for (const namespace of namespaces) {
        let pageToken: string | undefined;
        for (let pages = 0; pages < MAX_PAGES; pages++) {
          const page = (await this.client.raw(REGISTRIES[kind].list, {
            namespace,
            pageSize: 500,
            pageToken,
            reveal: true,
          })) as Page;
          for (const e of page.items) {
            if (e.builtin || e.namespace !== namespace) continue;
            out.push({
              kind,
              name: e.name,
              namespace: e.namespace,
              revision: e.revision,
              contentHash: e.contentHash,
              definition: e.definition as Record<string, unknown>,
            });
          }
          if (!page.nextPageToken) break;
          pageToken = page.nextPageToken;
        }
      }
      return out;
    });
  }

  async add(kind: RegistryKind, definition: Record<string, unknown>): Promise<RemoteWriteResult> {
    return this.guard(async () => {
      const e = (await this.client.raw(REGISTRIES[kind].add, { definition })) as Stored;
      return { ok: true, revision: e.revision, contentHash: e.contentHash };
    });
  }

  async update(
    kind: RegistryKind,
    name: string,
    definition: Record<string, unknown>,
    expectedRevision: number | undefined,
  ): Promise<RemoteWriteResult> {
    return this.guard(async () => {
      try {
        const e = (await this.client.raw(REGISTRIES[kind].update, { name, definition, expectedRevision })) as Stored;
        return { ok: true, revision: e.revision, contentHash: e.contentHash };
      } catch (err) {
        if (err instanceof A2AClientError && err.reason === 'REVISION_CONFLICT') {
          const rev = (err.data as { details?: { revision?: unknown } } | undefined)?.details?.revision;
          return { conflict: true, serverRevision: typeof rev === 'number' ? rev : -1 };
        }
        throw err;
      }
    });
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** What the server said, as our own error: its reason, and where it came from. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof A2AClientError) {
        const reason: ErrorReason = (ERROR_REASONS as readonly string[]).includes(err.reason ?? '')
          ? (err.reason as ErrorReason)
          : 'UNAVAILABLE';
        throw new AppError(reason, `The server at ${this.url} answered: ${err.message}`, {
          hint:
            reason === 'UNAUTHENTICATED'
              ? 'check the token: agents server connect URL --token KEY (or CLEVERAGENTS_SERVER_TOKEN)'
              : err.hint,
        });
      }
      if (err instanceof A2ATransportError)
        throw new AppError('UNAVAILABLE', `Cannot reach the server at ${this.url}: ${err.message}`, {
          hint: 'check the URL and that the server runs (agents server status shows the connection)',
        });
      throw err;
    }
  }
}

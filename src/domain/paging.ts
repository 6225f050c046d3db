import { AppError } from './errors.ts';

/** Where a page ends: the sort key and the unique id of the last item returned. */
export interface PageCursor {
  key: string;
  id: string;
}

/** One page of a list, and the token that continues it ('' on the last page). */
export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

/**
 * Page tokens are opaque to clients: base64url of the JSON `[key, id]` of the last item returned.
 * Every list (tasks, sessions, registries, plans) issues and reads them through these two.
 */
export function encodePageToken(c: PageCursor): string {
  return Buffer.from(JSON.stringify([c.key, c.id]), 'utf8').toString('base64url');
}

/** The cursor a token names; INVALID_PARAMS (-32602, field pageToken) for one this server did not issue. */
export function decodePageToken(token: string): PageCursor {
  try {
    const v: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string')
      return { key: v[0], id: v[1] };
  } catch {
    // reported below
  }
  throw new AppError('INVALID_PARAMS', 'pageToken is not a token this server issued', {
    fields: [{ field: 'pageToken', description: 'use the nextPageToken of a previous list response' }],
  });
}

/** The token a page continues after, or '' when it was the last one. */
function nextPageToken<T>(page: readonly T[], more: boolean, cursorOf: (item: T) => PageCursor): string {
  const last = page[page.length - 1];
  return more && last !== undefined ? encodePageToken(cursorOf(last)) : '';
}

/**
 * A page of a list held in memory, sorted by (key, id) in `order`: the `pageSize` items strictly
 * after the token's position (so an item removed between two calls loses nobody their place).
 */
export function pageOf<T>(
  sorted: readonly T[],
  cursorOf: (item: T) => PageCursor,
  opts: { pageToken?: string | undefined; pageSize: number; order: 'asc' | 'desc' },
): Page<T> {
  const after = opts.pageToken ? decodePageToken(opts.pageToken) : undefined;
  const sign = opts.order === 'asc' ? 1 : -1;
  const start = after === undefined ? 0 : sorted.findIndex((item) => sign * compareCursors(cursorOf(item), after) > 0);
  const from = start < 0 ? sorted.length : start;
  const items = sorted.slice(from, from + opts.pageSize);
  return { items, nextPageToken: nextPageToken(items, from + opts.pageSize < sorted.length, cursorOf) };
}

function compareCursors(a: PageCursor, b: PageCursor): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A position in a list ordered by last update, newest first (tasks, sessions): its token's key is `updatedAt`. */
export interface UpdateCursor {
  updatedAt: string;
  id: string;
}

export function encodeUpdateCursor(c: UpdateCursor): string {
  return encodePageToken({ key: c.updatedAt, id: c.id });
}

export function decodeUpdateCursor(token: string): UpdateCursor {
  const c = decodePageToken(token);
  return { updatedAt: c.key, id: c.id };
}

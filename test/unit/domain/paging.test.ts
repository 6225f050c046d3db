import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/domain/errors.ts';
import {
  decodePageToken,
  decodeUpdateCursor,
  encodePageToken,
  encodeUpdateCursor,
  pageOf,
  type PageCursor,
} from '../../../src/domain/paging.ts';

const refusedToken = (err: unknown): boolean =>
  err instanceof AppError && err.reason === 'INVALID_PARAMS' && err.fields?.[0]?.field === 'pageToken';

describe('page tokens', () => {
  it('round-trips a cursor through an opaque base64url token', () => {
    const c = { key: '2026-03-01T10:00:00.000Z', id: '01J0000000000000000000000' };
    const token = encodePageToken(c);
    assert.match(token, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodePageToken(token), c);
    assert.deepEqual(decodeUpdateCursor(encodeUpdateCursor({ updatedAt: c.key, id: c.id })), {
      updatedAt: c.key,
      id: c.id,
    });
  });

  it('refuses a token this server did not issue, naming the field', () => {
    const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
    for (const token of [
      'not-a-token',
      '!!',
      b64(['only-one']),
      b64([1, 'x']),
      b64({ key: 'a', id: 'b' }),
      Buffer.from('local/tool', 'utf8').toString('base64url'),
    ]) {
      assert.throws(() => decodePageToken(token), refusedToken, token);
    }
  });
});

describe('pageOf', () => {
  const items = [
    { t: '3', id: 'a' },
    { t: '2', id: 'c' },
    { t: '2', id: 'b' },
    { t: '1', id: 'z' },
  ];
  const cursorOf = (x: { t: string; id: string }): PageCursor => ({ key: x.t, id: x.id });

  const walk = (list: typeof items, pageSize: number): string[] => {
    const seen: string[] = [];
    let token = '';
    for (let i = 0; i <= list.length; i++) {
      const page = pageOf(list, cursorOf, { pageToken: token || undefined, pageSize, order: 'desc' });
      seen.push(...page.items.map((x) => x.id));
      token = page.nextPageToken;
      if (!token) break;
    }
    return seen;
  };

  it('visits every item once, in order, through equal sort keys, at any page size', () => {
    for (const size of [1, 2, 3, 4, 10]) assert.deepEqual(walk(items, size), ['a', 'c', 'b', 'z'], `page size ${size}`);
  });

  it('ends with an empty token on the last page', () => {
    assert.equal(pageOf(items, cursorOf, { pageSize: 4, order: 'desc' }).nextPageToken, '');
    assert.notEqual(pageOf(items, cursorOf, { pageSize: 3, order: 'desc' }).nextPageToken, '');
  });

  it('continues after the position, even when the last item returned was removed meanwhile', () => {
    const first = pageOf(items, cursorOf, { pageSize: 2, order: 'desc' });
    assert.deepEqual(
      first.items.map((x) => x.id),
      ['a', 'c'],
    );
    const without = items.filter((x) => x.id !== 'c');
    assert.deepEqual(
      pageOf(without, cursorOf, { pageToken: first.nextPageToken, pageSize: 2, order: 'desc' }).items.map((x) => x.id),
      ['b', 'z'],
    );
  });

  it('pages ascending lists too', () => {
    const asc = [...items].reverse();
    const first = pageOf(asc, cursorOf, { pageSize: 2, order: 'asc' });
    assert.deepEqual(
      first.items.map((x) => x.id),
      ['z', 'b'],
    );
    assert.deepEqual(
      pageOf(asc, cursorOf, { pageToken: first.nextPageToken, pageSize: 2, order: 'asc' }).items.map((x) => x.id),
      ['c', 'a'],
    );
  });

  it('refuses a foreign token before returning anything', () => {
    assert.throws(() => pageOf(items, cursorOf, { pageToken: 'a', pageSize: 2, order: 'desc' }), refusedToken);
  });
});

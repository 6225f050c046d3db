import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { inRequestScope } from '../../../../src/application/index.ts';
import { correlationIdNow, requestIdOf, TrustedProxies } from '../../../../src/protocol/server/request-origin.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const withId = (id: string | string[] | undefined): IncomingMessage =>
  ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as IncomingMessage;

describe('requestIdOf', () => {
  it("keeps a client's id of 1 to 128 printable ASCII characters, spaces and punctuation included", () => {
    for (const id of ['a', 'deploy-42/req:7 abc', '~'.repeat(128)]) assert.equal(requestIdOf(withId(id)), id);
  });

  it('replaces an empty, too long, non-ASCII or control-character id with a new UUID', () => {
    for (const id of ['', 'x'.repeat(129), 'caf\u00e9', 'a\tb', 'a\u0000b', undefined]) {
      const made = requestIdOf(withId(id));
      assert.match(made, UUID, JSON.stringify(id));
    }
  });

  it('reads the first of repeated headers', () => {
    assert.equal(requestIdOf(withId(['first', 'second'])), 'first');
  });
});

describe('correlationIdNow', () => {
  it("is the request's id inside its scope (and what it starts), a new one outside", async () => {
    const inside = await inRequestScope({ requestId: 'r-1' }, async () => {
      await new Promise((r) => setImmediate(r));
      return correlationIdNow();
    });
    assert.equal(inside, 'r-1');
    assert.match(correlationIdNow(), UUID);
  });
});

describe('TrustedProxies', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '192.0.2.10', 'fd00::/8']);

  it('trusts addresses and ranges of both families, IPv4-mapped IPv6 included', () => {
    assert.ok(proxies.trusts('10.1.2.3'));
    assert.ok(proxies.trusts('::ffff:10.1.2.3'));
    assert.ok(proxies.trusts('192.0.2.10'));
    assert.ok(!proxies.trusts('192.0.2.11'));
    assert.ok(proxies.trusts('fd12::1'));
    assert.ok(!proxies.trusts('fe80::1'));
    assert.ok(!proxies.trusts('not an address'));
  });

  it('takes the right-most forwarded address that is not a trusted proxy, only from a trusted socket', () => {
    assert.equal(proxies.clientOf('10.0.0.1', '198.51.100.7'), '198.51.100.7');
    assert.equal(proxies.clientOf('::ffff:10.0.0.1', '203.0.113.5, 198.51.100.7, 10.0.0.2'), '198.51.100.7');
    assert.equal(proxies.clientOf('10.0.0.1', ['203.0.113.5', '198.51.100.7']), '198.51.100.7');
    assert.equal(proxies.clientOf('10.0.0.1', '2001:db8::5'), '2001:db8::5');
    assert.equal(proxies.clientOf('198.51.100.1', '203.0.113.5'), '198.51.100.1', 'an untrusted sender');
    assert.equal(proxies.clientOf('::ffff:198.51.100.1', undefined), '198.51.100.1');
    assert.equal(proxies.clientOf('10.0.0.1', '10.0.0.2, 10.0.0.3'), '10.0.0.1', 'only proxies: the socket');
    assert.equal(proxies.clientOf('10.0.0.1', 'unknown'), '10.0.0.1', 'garbage: the socket');
    assert.equal(proxies.clientOf('10.0.0.1', '198.51.100.7:5000'), '10.0.0.1', 'an address with a port is not one');
  });

  it('trusts nobody when none is configured', () => {
    assert.equal(new TrustedProxies([]).clientOf('127.0.0.1', '198.51.100.7'), '127.0.0.1');
  });

  it('refuses an entry that is neither an address nor a CIDR range, naming it', () => {
    for (const bad of ['proxy.internal', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/1', '10.0.0.0/x', '']) {
      assert.throws(() => new TrustedProxies([bad]), {
        message: new RegExp(`"${bad.replace(/[/.]/g, '\\$&')}" is not an IP address or CIDR range`),
      });
    }
  });
});

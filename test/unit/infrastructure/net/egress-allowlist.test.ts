/** The administrator's egress allowlist: HOST or HOST:PORT, however a URL spells the host. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EgressAllowlist, EgressAllowlistError, parseEgressAllowEntry } from '../../../../src/infrastructure/index.ts';

describe('parseEgressAllowEntry', () => {
  it('reads host names, IPv4 and IPv6 with and without a port', () => {
    assert.deepEqual(parseEgressAllowEntry('localhost'), { host: 'localhost' });
    assert.deepEqual(parseEgressAllowEntry(' Ollama.LAN:11434 '), { host: 'ollama.lan', port: 11434 });
    assert.deepEqual(parseEgressAllowEntry('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseEgressAllowEntry('::1'), { host: '::1' });
    assert.deepEqual(parseEgressAllowEntry('[::1]'), { host: '::1' });
    assert.deepEqual(parseEgressAllowEntry('[0:0:0:0:0:0:0:1]:8080'), { host: '::1', port: 8080 });
    assert.deepEqual(parseEgressAllowEntry('FD00::AB'), { host: 'fd00::ab' });
  });

  it('refuses malformed entries, saying what is wrong', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /not a host name/],
      ['http://127.0.0.1:80', /not a host name or an IP address/],
      ['*.internal', /wildcards and URLs are not accepted/],
      ['host:0', /port that is not a number from 1 to 65535/],
      ['host:65536', /port that is not a number from 1 to 65535/],
      ['host:http', /port that is not a number/],
      ['host:', /port that is not a number/],
      ['[not-v6]:80', /brackets around something that is not an IPv6 address/],
      ['fe80::1::2', /is not an IPv6 address/],
      ['a/b', /not a host name/],
    ];
    for (const [entry, why] of cases) {
      assert.throws(
        () => parseEgressAllowEntry(entry),
        (err: unknown) => err instanceof EgressAllowlistError && why.test(err.message) && err.entry === entry,
        entry,
      );
    }
  });
});

describe('EgressAllowlist', () => {
  const list = new EgressAllowlist(['localhost', '127.0.0.1:11434', '[::1]:8080', 'Ollama.lan']);

  it('allows a HOST entry on every port and a HOST:PORT entry on that port only', () => {
    assert.equal(list.allows('localhost', 80), true);
    assert.equal(list.allows('localhost', 9999), true);
    assert.equal(list.allows('127.0.0.1', 11434), true);
    assert.equal(list.allows('127.0.0.1', 11435), false);
    assert.equal(list.allows('127.0.0.1', 80), false);
  });

  it('matches host names case-insensitively and IPv6 however it is written', () => {
    assert.equal(list.allows('OLLAMA.LAN', 443), true);
    assert.equal(list.allows('[::1]', 8080), true);
    assert.equal(list.allows('::1', 8080), true);
    assert.equal(list.allows('0:0:0:0:0:0:0:1', 8080), true);
    assert.equal(list.allows('::1', 8081), false);
  });

  it('does not match other spellings of a different host', () => {
    assert.equal(list.allows('127.0.0.2', 11434), false);
    assert.equal(list.allows('ollama.lan.evil.example', 443), false);
    assert.equal(list.allows('::ffff:7f00:1', 11434), false);
    assert.equal(new EgressAllowlist().allows('localhost', 80), false);
  });
});

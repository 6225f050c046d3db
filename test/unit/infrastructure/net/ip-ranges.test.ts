/**
 * The address classes of the egress guard, judged on bytes: every refused range, the IPv6 forms
 * that embed an IPv4 address (judged by it), and what the URL parser turns odd spellings into.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipBytes, isRefusedAddress, refusedAddressClass } from '../../../../src/infrastructure/index.ts';

/** The host of a URL as the guard sees it (the WHATWG parser's output, brackets removed). */
const hostOf = (url: string): string => new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');

describe('ipBytes', () => {
  it('parses IPv4, IPv6 and IPv6 with an embedded dotted quad to the same bytes', () => {
    assert.deepEqual([...(ipBytes('127.0.0.1') ?? [])], [127, 0, 0, 1]);
    const hex = ipBytes('64:ff9b::7f00:1');
    assert.deepEqual(hex, ipBytes('64:ff9b::127.0.0.1'));
    assert.deepEqual([...(hex ?? [])], [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1]);
    assert.deepEqual(ipBytes('::ffff:7f00:1'), ipBytes('::ffff:127.0.0.1'));
    assert.deepEqual(ipBytes('0:0:0:0:0:0:0:1'), ipBytes('::1'));
    assert.deepEqual(ipBytes('[fe80::1%eth0]'), ipBytes('fe80::1'));
    assert.deepEqual([...(ipBytes('1:2:3:4:5:6:7:8') ?? [])], [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    assert.deepEqual([...(ipBytes('1::8') ?? [])], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8]);
  });

  it('refuses to parse what is not an address', () => {
    for (const s of ['example.com', '0177.0.0.1', '2130706433', '1.2.3', '::g', ''])
      assert.equal(ipBytes(s), undefined, s);
  });
});

describe('refusedAddressClass', () => {
  it('names every refused IPv4 range', () => {
    const cases: Array<[string, RegExp]> = [
      ['0.0.0.0', /this network/],
      ['0.255.1.2', /this network/],
      ['10.0.0.1', /^a private address$/],
      ['10.255.255.255', /private/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['100.127.255.254', /carrier-grade NAT/],
      ['127.0.0.1', /^a loopback address$/],
      ['127.255.0.9', /loopback/],
      ['169.254.169.254', /^a link-local address$/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.0.0.8', /IETF protocol assignment/],
      ['192.168.1.1', /private/],
      ['198.18.0.1', /benchmarking/],
      ['198.19.255.255', /benchmarking/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['240.0.0.1', /reserved/],
      ['255.255.255.255', /^the broadcast address$/],
    ];
    for (const [a, why] of cases) assert.match(refusedAddressClass(a) ?? 'allowed', why, a);
  });

  it('names every refused IPv6 range', () => {
    const cases: Array<[string, RegExp]> = [
      ['::', /^the unspecified address$/],
      ['::1', /^a loopback address$/],
      ['fc00::1', /unique-local/],
      ['fd12:3456::1', /unique-local/],
      ['fe80::abcd', /^a link-local address$/],
      ['febf::1', /link-local/],
      ['fec0::1', /site-local/],
      ['ff02::1', /multicast/],
      ['2001::1', /Teredo/],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
      // Local-use NAT64 in another of RFC 6052's layouts (here /48: 8.8.8.8 in bytes 6, 7, 9, 10)
      // cannot be judged without the local layout.
      ['64:ff9b:1:808:8:800::', /local-use NAT64 address not in the 64:ff9b:1::\/96 layout/],
    ];
    for (const [a, why] of cases) assert.match(refusedAddressClass(a) ?? 'allowed', why, a);
  });

  it('judges the forms that embed an IPv4 address by that address', () => {
    const cases: Array<[string, string]> = [
      ['::ffff:7f00:1', 'an IPv4-mapped form of 127.0.0.1, a loopback address'],
      ['::ffff:127.0.0.1', 'an IPv4-mapped form of 127.0.0.1, a loopback address'],
      ['::ffff:a00:1', 'an IPv4-mapped form of 10.0.0.1, a private address'],
      ['::7f00:1', 'an IPv4-compatible form of 127.0.0.1, a loopback address'],
      ['::a9fe:a9fe', 'an IPv4-compatible form of 169.254.169.254, a link-local address'],
      ['64:ff9b::7f00:1', 'a NAT64 form of 127.0.0.1, a loopback address'],
      ['64:ff9b::c0a8:101', 'a NAT64 form of 192.168.1.1, a private address'],
      ['64:ff9b:1::7f00:1', 'a local-use NAT64 form of 127.0.0.1, a loopback address'],
      ['2002:7f00:1::1', 'a 6to4 form of 127.0.0.1, a loopback address'],
      ['2002:a9fe:a9fe::', 'a 6to4 form of 169.254.169.254, a link-local address'],
    ];
    for (const [a, why] of cases) assert.equal(refusedAddressClass(a), why, a);
  });

  it('lets public addresses through, in every form', () => {
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '172.32.0.1',
      '172.15.255.255',
      '192.169.0.1',
      '100.128.0.1',
      '198.20.0.1',
      '2606:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:808:808',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '64:ff9b:1::808:808',
      '2002:808:808::1',
      '2001:db8::1',
    ])
      assert.equal(refusedAddressClass(a), undefined, a);
  });

  it('refuses text that is not an address', () => {
    assert.equal(refusedAddressClass('localhost'), 'not an IP address');
    assert.equal(isRefusedAddress('not-an-ip'), true);
    assert.equal(isRefusedAddress('8.8.8.8'), false);
  });

  it('judges what the URL parser makes of odd spellings (decimal, octal, hex, embedded quads)', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['http://2130706433/', '127.0.0.1', /loopback/],
      ['http://0177.0.0.1/', '127.0.0.1', /loopback/],
      ['http://0x7f.1/', '127.0.0.1', /loopback/],
      ['http://127.1/', '127.0.0.1', /loopback/],
      ['http://0/', '0.0.0.0', /this network/],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1', /IPv4-mapped form of 127\.0\.0\.1/],
      ['http://[::ffff:7f00:1]/', '::ffff:7f00:1', /IPv4-mapped form of 127\.0\.0\.1/],
      ['http://[::127.0.0.1]/', '::7f00:1', /IPv4-compatible form of 127\.0\.0\.1/],
      ['http://[::7f00:1]/', '::7f00:1', /IPv4-compatible form of 127\.0\.0\.1/],
      ['http://[64:ff9b::127.0.0.1]/', '64:ff9b::7f00:1', /NAT64 form of 127\.0\.0\.1/],
      ['http://[64:ff9b::7f00:1]/', '64:ff9b::7f00:1', /NAT64 form of 127\.0\.0\.1/],
      ['http://[0:0:0:0:0:0:0:1]/', '::1', /loopback/],
      ['http://[FE80::1]/', 'fe80::1', /link-local/],
    ];
    for (const [url, host, why] of cases) {
      assert.equal(hostOf(url), host, url);
      assert.match(refusedAddressClass(hostOf(url)) ?? 'allowed', why, url);
    }
  });
});

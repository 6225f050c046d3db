/**
 * The egress guard: the declare-time check (literals never looked up, names judged by every
 * address, the allowlist with and without a port) and the connect-time check of its fetch (real
 * HTTP on 127.0.0.1): a refused literal, a name that rebinds to loopback after it was declared,
 * and a redirect to a port that is not allowlisted all fail before a byte is sent.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EgressGuard, EgressRefusedError, egressRefusalOf } from '../../../../src/infrastructure/index.ts';

/** A resolver answering fixed records and recording what it was asked. */
function fakeDns(records: Record<string, string[] | (() => string[])>) {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<string[]> => {
    asked.push(host);
    const r = records[host];
    if (!r) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return typeof r === 'function' ? r() : r;
  };
  return { lookup, asked };
}

const isRefusal = (why: RegExp) => (err: unknown) => {
  const refused = egressRefusalOf(err);
  return refused instanceof EgressRefusedError && why.test(refused.message);
};

describe('EgressGuard.refusal (declare time)', () => {
  const dns = fakeDns({
    'public.example': ['93.184.216.34'],
    'v6.example': ['2606:4700::1111'],
    'internal.example': ['10.1.2.3'],
    'mixed.example': ['93.184.216.34', '192.168.1.10'],
    'mapped.example': ['::ffff:127.0.0.1'],
    'ollama.lan': ['10.0.0.5'],
  });
  const guard = new EgressGuard({ lookup: dns.lookup });
  after(() => guard.close());

  it('refuses internal literals in every spelling, naming the address and the flag that allows it', async () => {
    assert.equal(
      await guard.refusal('http://127.0.0.1:11434/v1'),
      'egress to 127.0.0.1 is refused: it is a loopback address; a server administrator may allow it with `agents serve --allow-egress 127.0.0.1:11434`',
    );
    assert.equal(
      await guard.refusal('http://[64:ff9b::7f00:1]/'),
      'egress to [64:ff9b::7f00:1] is refused: it is a NAT64 form of 127.0.0.1, a loopback address; a server administrator may allow it with `agents serve --allow-egress [64:ff9b::7f00:1]:80`',
    );
    const cases: Array<[string, RegExp]> = [
      ['http://[::7f00:1]/', /IPv4-compatible form of 127\.0\.0\.1/],
      ['http://[::127.0.0.1]/', /IPv4-compatible form of 127\.0\.0\.1/],
      ['http://[::ffff:7f00:1]/', /IPv4-mapped form of 127\.0\.0\.1/],
      ['http://[::ffff:127.0.0.1]/', /IPv4-mapped form of 127\.0\.0\.1/],
      ['http://[64:ff9b::127.0.0.1]/', /NAT64 form of 127\.0\.0\.1/],
      ['http://2130706433/', /egress to 127\.0\.0\.1 is refused: it is a loopback address/],
      ['http://0177.0.0.1/', /egress to 127\.0\.0\.1 is refused/],
      ['https://169.254.169.254/latest/meta-data', /link-local.*--allow-egress 169\.254\.169\.254:443/],
      ['http://10.0.0.1/', /private/],
      ['http://[::1]:8080/', /egress to \[::1\] is refused: it is a loopback address.*\[::1\]:8080/],
      ['http://[fd00::1]/', /unique-local/],
      ['http://[fe80::1]/', /link-local/],
      ['http://[2001::1]/', /Teredo/],
      ['http://0.0.0.0/', /this network/],
    ];
    for (const [url, why] of cases) assert.match((await guard.refusal(url)) ?? 'accepted', why, url);
    assert.deepEqual(dns.asked, [], 'a literal address never goes to DNS');
  });

  it('refuses a name when any of its addresses is internal, naming the name and the address', async () => {
    assert.equal(
      await guard.refusal('http://ollama.lan:11434/v1'),
      'egress to ollama.lan is refused: it resolves to 10.0.0.5, a private address; a server administrator may allow it with `agents serve --allow-egress ollama.lan:11434`',
    );
    assert.match((await guard.refusal('https://internal.example/x')) ?? '', /resolves to 10\.1\.2\.3/);
    assert.match((await guard.refusal('https://mixed.example/x')) ?? '', /resolves to 192\.168\.1\.10/);
    assert.match((await guard.refusal('https://mapped.example/x')) ?? '', /IPv4-mapped form of 127\.0\.0\.1/);
  });

  it('accepts public names and addresses', async () => {
    assert.equal(await guard.refusal('https://public.example/a2a'), undefined);
    assert.equal(await guard.refusal('https://v6.example/'), undefined);
    assert.equal(await guard.refusal('http://93.184.216.34:8443/'), undefined);
    assert.equal(await guard.refusal('http://[::ffff:808:808]/'), undefined);
    assert.equal((await guard.check('https://public.example/a2a')).href, 'https://public.example/a2a');
  });

  it('does not refuse a name that does not resolve now (it is judged when it is used)', async () => {
    assert.equal(await guard.refusal('https://not-yet.example/'), undefined);
    const slow = new EgressGuard({ lookup: () => new Promise(() => {}), declareLookupMs: 20 });
    assert.equal(await slow.refusal('https://hangs.example/'), undefined);
    await slow.close();
  });

  it('refuses what is not an http(s) URL', async () => {
    assert.match((await guard.refusal('ftp://public.example/')) ?? '', /^ftp URLs are refused: only http and https/);
    assert.match((await guard.refusal('file:///etc/passwd')) ?? '', /^file URLs are refused/);
    assert.match((await guard.refusal('not a url')) ?? '', /is not a valid absolute URL/);
    await assert.rejects(guard.check('gopher://x/'), EgressRefusedError);
  });

  it('lets an allowlisted host through: HOST on every port, HOST:PORT on that port only', async () => {
    const allowed = new EgressGuard({
      allow: ['127.0.0.1:11434', 'ollama.lan', '[64:ff9b::7f00:1]', 'LocalHost:8080'],
      lookup: dns.lookup,
    });
    assert.equal(await allowed.refusal('http://127.0.0.1:11434/v1'), undefined);
    assert.match((await allowed.refusal('http://127.0.0.1:11435/v1')) ?? '', /--allow-egress 127\.0\.0\.1:11435/);
    assert.equal(await allowed.refusal('http://ollama.lan:1/'), undefined);
    assert.equal(await allowed.refusal('https://OLLAMA.LAN/'), undefined);
    assert.equal(await allowed.refusal('http://[64:ff9b::127.0.0.1]:9/'), undefined);
    assert.equal(await allowed.refusal('http://localhost:8080/'), undefined);
    await allowed.close();
  });
});

describe('EgressGuard.fetch (connect time)', () => {
  const hits: string[] = [];
  let server: http.Server;
  let other: http.Server;
  let port: number;
  let otherPort: number;

  before(async () => {
    const listen = async (s: http.Server): Promise<number> => {
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      return (s.address() as AddressInfo).port;
    };
    server = http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${otherPort}/landed` }).end();
      else {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => res.end(`ok ${body}`));
      }
    });
    other = http.createServer((req, res) => {
      hits.push(`other ${req.url}`);
      res.end('other');
    });
    port = await listen(server);
    otherPort = await listen(other);
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await new Promise<void>((r) => other.close(() => r()));
  });

  it('refuses to connect to an internal literal, sending nothing', async () => {
    hits.length = 0;
    const guard = new EgressGuard();
    await assert.rejects(
      guard.fetch(`http://127.0.0.1:${port}/x`),
      isRefusal(new RegExp(`egress to 127\\.0\\.0\\.1 is refused: it is a loopback address.*127\\.0\\.0\\.1:${port}`)),
    );
    await assert.rejects(
      guard.fetch(`http://[::ffff:7f00:1]:${port}/x`),
      isRefusal(/IPv4-mapped form of 127\.0\.0\.1/),
    );
    assert.deepEqual(hits, []);
    await guard.close();
  });

  it('refuses a name that answered a public address when declared and loopback when connecting (DNS rebinding)', async () => {
    hits.length = 0;
    let calls = 0;
    const dns = fakeDns({ 'rebind.example': () => (++calls === 1 ? ['93.184.216.34'] : ['127.0.0.1']) });
    const guard = new EgressGuard({ lookup: dns.lookup });
    const url = `http://rebind.example:${port}/x`;
    assert.equal(await guard.refusal(url), undefined, 'declared while it answered a public address');
    await assert.rejects(
      guard.fetch(url),
      isRefusal(
        new RegExp(
          `^egress to rebind\\.example is refused: it resolves to 127\\.0\\.0\\.1, a loopback address; .*--allow-egress rebind\\.example:${port}\``,
        ),
      ),
    );
    assert.equal(calls, 2, 'the connection resolved the name again, through the guard');
    assert.deepEqual(hits, []);
    await guard.close();
  });

  it('connects to an allowlisted host without judging its address, and passes a Request through', async () => {
    hits.length = 0;
    const guard = new EgressGuard({ allow: [`127.0.0.1:${port}`, 'localhost'] });
    const res = await guard.fetch(`http://127.0.0.1:${port}/a`, { method: 'POST', body: 'one' });
    assert.equal(await res.text(), 'ok one');
    const viaName = await guard.fetch(`http://localhost:${port}/b`);
    assert.equal(await viaName.text(), 'ok ');
    const req = await guard.fetch(new Request(`http://127.0.0.1:${port}/c`, { method: 'POST', body: 'two' }));
    assert.equal(await req.text(), 'ok two');
    assert.deepEqual(hits, ['POST /a', 'GET /b', 'POST /c']);
    await guard.close();
  });

  it('checks every hop of a followed redirect', async () => {
    hits.length = 0;
    const guard = new EgressGuard({ allow: [`127.0.0.1:${port}`] });
    await assert.rejects(
      guard.fetch(`http://127.0.0.1:${port}/redirect`),
      isRefusal(new RegExp(`--allow-egress 127\\.0\\.0\\.1:${otherPort}`)),
    );
    assert.deepEqual(hits, ['GET /redirect'], 'the redirect target was never reached');
    const both = new EgressGuard({ allow: [`127.0.0.1:${port}`, `127.0.0.1:${otherPort}`] });
    assert.equal(await (await both.fetch(`http://127.0.0.1:${port}/redirect`)).text(), 'other');
    await Promise.all([guard.close(), both.close()]);
  });
});

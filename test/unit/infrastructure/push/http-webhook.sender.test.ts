import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpWebhookSender, isBlockedAddress, WebhookRefusedError } from '../../../../src/infrastructure/index.js';

interface Hit {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const signal = () => AbortSignal.timeout(5000);
const refused = (err: unknown) => err instanceof WebhookRefusedError;

describe('HttpWebhookSender guard', () => {
  // A lookup that must never be consulted for IP literals, and answers fixed records otherwise.
  const records: Record<string, string[]> = {
    'public.example': ['93.184.216.34'],
    'internal.example': ['10.1.2.3'],
    'mixed.example': ['93.184.216.34', '192.168.1.10'],
    'v6.example': ['2606:4700::1111'],
    localhost: ['127.0.0.1', '::1'],
  };
  const lookup = async (host: string): Promise<string[]> => {
    const r = records[host];
    if (!r) throw new Error(`ENOTFOUND ${host}`);
    return r;
  };
  const guard = new HttpWebhookSender({ lookup });

  it('refuses private, loopback and link-local addresses without sending anything', async () => {
    for (const url of [
      'http://10.0.0.1/hook',
      'http://127.0.0.1:8080/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://172.20.0.5/',
      'http://192.168.0.1/',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[fe80::1]/',
      'http://[fd00::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
    ]) {
      await assert.rejects(guard.send(url, {}, '{}', signal()), refused, url);
    }
  });

  it('refuses a name when any of its addresses is internal', async () => {
    await assert.rejects(guard.check('https://internal.example/x'), /resolves to 10\.1\.2\.3/);
    await assert.rejects(guard.check('https://mixed.example/x'), /resolves to 192\.168\.1\.10/);
    await assert.rejects(guard.check('http://localhost:9/x'), refused);
  });

  it('accepts public names and addresses', async () => {
    assert.equal((await guard.check('https://public.example/a2a')).href, 'https://public.example/a2a');
    assert.equal((await guard.check('https://v6.example/')).hostname, 'v6.example');
    assert.equal((await guard.check('http://93.184.216.34:8443/')).port, '8443');
  });

  it('refuses schemes other than http and https, and unresolvable hosts', async () => {
    await assert.rejects(guard.check('ftp://public.example/'), /must use http or https, not ftp/);
    await assert.rejects(guard.check('file:///etc/passwd'), refused);
    await assert.rejects(guard.check('not a url'), refused);
    await assert.rejects(guard.check('https://unknown.example/'), /could not be resolved/);
  });

  it('classifies addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.255.0.1',
      '172.31.255.255',
      '192.168.3.4',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fc00::1',
      'fe80::abcd',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
      'not-an-ip',
    ]) {
      assert.equal(isBlockedAddress(a), true, a);
    }
    for (const a of ['8.8.8.8', '172.32.0.1', '192.169.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
      assert.equal(isBlockedAddress(a), false, a);
    }
  });
});

describe('HttpWebhookSender delivery', () => {
  const hits: Hit[] = [];
  let status = 200;
  let server: http.Server;
  let base: string;

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        hits.push({ method: req.method, url: req.url, headers: req.headers, body });
        if (status >= 300 && status < 400) res.setHeader('location', `${base}/redirected`);
        res.writeHead(status).end('ignored');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const allowed = new HttpWebhookSender({ allowHosts: ['127.0.0.1', 'localhost'] });

  it('POSTs the body and headers to an allowed local receiver', async () => {
    hits.length = 0;
    status = 204;
    await allowed.send(
      `${base}/hook?x=1`,
      { 'content-type': 'application/json', 'x-a2a-notification-token': 'tok' },
      '{"ok":true}',
      signal(),
    );
    assert.equal(hits.length, 1);
    assert.equal(hits[0]?.method, 'POST');
    assert.equal(hits[0]?.url, '/hook?x=1');
    assert.equal(hits[0]?.headers['x-a2a-notification-token'], 'tok');
    assert.equal(hits[0]?.headers['content-type'], 'application/json');
    assert.equal(hits[0]?.body, '{"ok":true}');
  });

  it('refuses the same receiver when loopback is not allowed', async () => {
    hits.length = 0;
    await assert.rejects(new HttpWebhookSender().send(`${base}/hook`, {}, '{}', signal()), refused);
    assert.equal(hits.length, 0);
  });

  it('throws when the receiver answers 500', async () => {
    status = 500;
    await assert.rejects(allowed.send(`${base}/hook`, {}, '{}', signal()), /HTTP 500/);
  });

  it('treats a redirect as a failure and does not follow it', async () => {
    hits.length = 0;
    status = 307;
    await assert.rejects(allowed.send(`${base}/hook`, {}, '{}', signal()), /redirect.*HTTP 307/);
    assert.deepEqual(
      hits.map((h) => h.url),
      ['/hook'],
    );
  });
});

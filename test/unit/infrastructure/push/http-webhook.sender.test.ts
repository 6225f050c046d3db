import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressGuard, EgressRefusedError, HttpWebhookSender } from '../../../../src/infrastructure/index.ts';

interface Hit {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const signal = () => AbortSignal.timeout(5000);
/** A refusal the notifier does not retry. */
const refused = (err: unknown) => err instanceof EgressRefusedError && err.permanent;

describe('HttpWebhookSender guard', () => {
  // A lookup that must never be consulted for IP literals, and answers fixed records otherwise.
  const asked: string[] = [];
  const records: Record<string, string[]> = {
    'internal.example': ['10.1.2.3'],
    localhost: ['127.0.0.1', '::1'],
  };
  const lookup = async (host: string): Promise<string[]> => {
    asked.push(host);
    const r = records[host];
    if (!r) throw new Error(`ENOTFOUND ${host}`);
    return r;
  };
  const sender = new HttpWebhookSender({ guard: new EgressGuard({ lookup }) });

  it('refuses internal targets in every spelling, permanently, without sending anything', async () => {
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
      'http://[64:ff9b::7f00:1]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://[::7f00:1]/',
      'http://[::127.0.0.1]/',
      'http://2130706433/',
      'http://0177.0.0.1/',
    ]) {
      await assert.rejects(sender.send(url, {}, '{}', signal()), refused, url);
    }
    assert.deepEqual(asked, []);
  });

  it('refuses a name that resolves to an internal address, and what is not http(s)', async () => {
    await assert.rejects(sender.send('https://internal.example/x', {}, '{}', signal()), /resolves to 10\.1\.2\.3/);
    await assert.rejects(sender.send('http://localhost:9/x', {}, '{}', signal()), refused);
    await assert.rejects(
      sender.send('ftp://internal.example/', {}, '{}', signal()),
      /ftp URLs are refused: only http and https/,
    );
    await assert.rejects(sender.send('not a url', {}, '{}', signal()), refused);
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

  const allowed = new HttpWebhookSender({ guard: new EgressGuard({ allow: ['127.0.0.1', 'localhost'] }) });

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
    await assert.rejects(
      new HttpWebhookSender({ guard: new EgressGuard() }).send(`${base}/hook`, {}, '{}', signal()),
      refused,
    );
    assert.equal(hits.length, 0);
  });

  it('refuses, permanently, a name that rebinds to loopback between the check and the connection', async () => {
    hits.length = 0;
    let calls = 0;
    const rebinding = new EgressGuard({
      lookup: async () => (++calls === 1 ? ['93.184.216.34'] : ['127.0.0.1']),
    });
    const port = new URL(base).port;
    await assert.rejects(
      new HttpWebhookSender({ guard: rebinding }).send(`http://rebind.example:${port}/hook`, {}, '{}', signal()),
      (err: unknown) => refused(err) && /rebind\.example is refused: it resolves to 127\.0\.0\.1/.test(String(err)),
    );
    assert.equal(calls, 2);
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

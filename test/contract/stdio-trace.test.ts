/**
 * Stdio has no headers: a client's trace context comes as `params._meta.traceparent`. The request's
 * span continues it, the turn it starts is that span's child, and `_meta` never reaches a method's
 * (strict) params check.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, silentLogger } from '../../src/application/index.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { stdioTelemetry } from '../../src/main/telemetry-wiring.ts';
import { A2aStdioServer } from '../../src/protocol/server/stdio.server.ts';
import { eventually } from '../support/eventually.ts';
import { recordingTracer } from '../support/fakes/recording-tracer.ts';

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('stdio: a client’s traceparent', () => {
  const tracer = recordingTracer();
  let app: App;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ca-stdio-trace-'));
    app = await buildApp({ dataDir, inMemory: true, card: { endpoint: 'stdio://local', auth: 'none' }, tracer });
  });
  after(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('parents the request span, which parents the turn; params._meta is accepted by every method', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let out = '';
    output.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const server = new A2aStdioServer({
      dispatcher: app.dispatcher,
      card: app.card,
      logger: silentLogger,
      serverInfo: { name: 't', version: '0' },
      input,
      output,
      principal: LOCAL_PRINCIPAL,
      telemetry: stdioTelemetry(tracer),
    });
    const meta = { _meta: { traceparent: TP } };
    input.write('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"1.0"}}\n');
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { ...meta, message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } })}\n`,
    );
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: '_cleveragents/session/list', params: { ...meta } })}\n`,
    );
    await eventually(async () =>
      Promise.resolve(tracer.spans.find((s) => s.name.startsWith('invoke_agent'))?.ended || undefined),
    );
    input.end();
    await server.done;
    const answers = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id?: number; error?: unknown });
    for (const id of [1, 2]) assert.equal(answers.find((a) => a.id === id)?.error, undefined, out);
    const send = tracer.spans.find((s) => s.name === 'jsonrpc SendMessage');
    assert.equal(send?.options.traceparent, TP);
    assert.equal(send?.options.kind, 'server');
    const turn = tracer.spans.find((s) => s.name === 'invoke_agent builtin/echo');
    assert.equal(turn?.parent, send);
    assert.equal(tracer.spans.find((s) => s.name === 'jsonrpc _cleveragents/session/list')?.options.traceparent, TP);
  });
});

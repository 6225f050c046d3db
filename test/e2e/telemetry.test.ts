/**
 * End to end: `agents serve --metrics` with traces sent to an OTLP receiver started here. The
 * metrics are scraped as Prometheus does and parsed with a Prometheus text parser; the trace of a
 * SendMessage that carries a client's `traceparent` continues it, through the turn.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
// @ts-expect-error: the parser ships no types; its result is typed where it is used.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { startFakeOpenAI, type FakeLlm } from '../support/fake-llm.ts';
import { initRepo } from '../support/git.ts';
import { eventually } from '../support/harness.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.ts';
import { startTeamServer, type TeamServer } from '../support/team-server.ts';

interface PromFamily {
  name: string;
  type: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string; count?: string }>;
}
const parseMetrics = parsePrometheusTextFormat as (text: string) => PromFamily[];

const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

const KEY = 'sk-telemetry-0123456789abcdef';

let otlp: OtlpReceiver;
let fake: FakeLlm;
let server: TeamServer;

before(async () => {
  otlp = await startOtlpReceiver();
  fake = await startFakeOpenAI({ expectKey: KEY });
  server = await startTeamServer({
    env: {
      CLEVERAGENTS_METRICS: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      TELEMETRY_LLM_KEY: KEY,
    },
  });
});

after(async () => {
  await server?.close();
  await fake?.close();
  await otlp?.close();
});

/** SendMessage over HTTP with a client's trace context. */
async function sendTraced(traceId: string, parentSpan: string, params: Record<string, unknown>): Promise<unknown> {
  const res = await fetch(`${server.baseUrl}/a2a`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      authorization: `Bearer ${server.adminToken}`,
      traceparent: `00-${traceId}-${parentSpan}-01`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  assert.ok(body.result, JSON.stringify(body));
  return body.result;
}

const scrape = (credential?: string): Promise<Response> =>
  fetch(`${server.baseUrl}/metrics`, credential ? { headers: { authorization: `Bearer ${credential}` } } : {});

describe('agents serve --metrics and --otlp-endpoint', () => {
  it('serves Prometheus metrics to the administrator: requests by method and outcome, and the gauges', async () => {
    await server.as(server.adminToken).ok('_cleveragents/session/list', {});
    const bad = await server.as(server.adminToken).call('NoSuchMethod', {});
    assert.equal(bad.body.error?.code, -32601);
    const res = await scrape(server.adminToken);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const families = parseMetrics(await res.text());
    const byName = new Map(families.map((f) => [f.name, f]));
    const requests = byName.get('cleveragents_requests_total');
    assert.equal(requests?.type, 'COUNTER');
    const listed = requests?.metrics.find(
      (m) => m.labels?.['method'] === '_cleveragents/session/list' && m.labels['outcome'] === 'ok',
    );
    assert.equal(listed?.value, '1');
    // A name not in the method table is counted as `unknown`: labels stay bounded.
    const unknown = requests?.metrics.find((m) => m.labels?.['method'] === 'unknown');
    assert.equal(unknown?.labels?.['outcome'], '-32601');
    assert.ok(!requests?.metrics.some((m) => m.labels?.['method'] === 'NoSuchMethod'));
    assert.equal(byName.get('cleveragents_request_duration_seconds')?.type, 'HISTOGRAM');
    for (const gauge of [
      'cleveragents_turns_running',
      'cleveragents_sse_streams_open',
      'cleveragents_push_outbox_depth',
      'cleveragents_runners_live',
    ])
      assert.equal(byName.get(gauge)?.type, 'GAUGE', gauge);
    assert.equal(byName.get('cleveragents_runners_live')?.metrics[0]?.value, '1');
    // SQLite has no pool: its gauges are left out.
    assert.equal(byName.get('cleveragents_db_pool_waiting'), undefined);
  });

  it('refuses /metrics without a key (401) and to a member who is not an administrator (403)', async () => {
    const none = await scrape();
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal((await scrape('not-a-key')).status, 401);
    const member = await server.addUser(server.adminToken, 'metrics-member');
    const refused = await scrape(member);
    assert.equal(refused.status, 403);
    assert.match(((await refused.json()) as { error: string }).error, /administrators/);
  });

  it('continues the client’s traceparent: the request span is its child, and the turn the request’s', async () => {
    await sendTraced(CLIENT_TRACE, CLIENT_SPAN, {
      message: { messageId: 'trace-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] },
    });
    const turn = await eventually(
      async () =>
        Promise.resolve(otlp.spans.find((s) => s.traceId === CLIENT_TRACE && s.name.startsWith('invoke_agent'))),
      10_000,
      'the turn span',
    );
    const request = otlp.spans.find((s) => s.traceId === CLIENT_TRACE && s.name === 'POST /a2a');
    assert.ok(request, `spans: ${JSON.stringify(otlp.spans.map((s) => s.name))}`);
    assert.equal(request.parentSpanId, CLIENT_SPAN);
    assert.equal(request.kind, 2 /* SERVER */);
    assert.equal(request.attributes['rpc.method'], 'SendMessage');
    assert.equal(request.attributes['rpc.system'], 'jsonrpc');
    assert.equal(turn.parentSpanId, request.spanId);
    assert.equal(turn.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(turn.attributes['gen_ai.agent.name'], 'builtin/echo');
  });

  it('shows one trace from the HTTP request through the turn and the model call to the tool call', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    initRepo(join(server.dataDir, 'workspaces', 'local', 'app'), { 'notes.txt': 'the answer is 42\n' });
    const admin = server.as(server.adminToken);
    const add = (kind: string, definition: Record<string, unknown>): Promise<unknown> =>
      admin.ok(`_cleveragents/registry/${kind}/add`, { definition });
    await add('resources', { name: 'local/app', type: 'git-checkout', path: 'app' });
    await add('projects', { name: 'local/app', resources: ['local/app'] });
    await add('actors', {
      name: 'local/traced',
      provider: 'openai-compatible',
      model: 'fake-model',
      baseUrl: fake.url,
      apiKeyEnv: 'TELEMETRY_LLM_KEY',
      tools: ['builtin/read-file'],
    });
    const session = await admin.ok<{ id: string }>('_cleveragents/session/create', {
      actor: 'local/traced',
      project: 'local/app',
    });
    fake.push(
      { toolCalls: [{ id: 'call-1', name: 'builtin__read-file', arguments: '{"path":"notes.txt"}' }] },
      { text: ['42'] },
    );
    await sendTraced(traceId, CLIENT_SPAN, {
      message: {
        messageId: 'trace-llm',
        role: 'ROLE_USER',
        contextId: session.id,
        parts: [{ text: 'what is the answer?' }],
      },
    });
    const tool = await eventually(
      async () => Promise.resolve(otlp.spans.find((s) => s.traceId === traceId && s.name.startsWith('execute_tool'))),
      15_000,
      'the tool call span',
    );
    const chats = await eventually(
      async () => {
        const found = otlp.spans.filter((s) => s.traceId === traceId && s.name === 'chat fake-model');
        return Promise.resolve(found.length === 2 ? found : undefined);
      },
      15_000,
      'both model call spans',
    );
    const turn = otlp.spans.find((s) => s.traceId === traceId && s.name === 'invoke_agent local/traced');
    const request = otlp.spans.find((s) => s.traceId === traceId && s.name === 'POST /a2a');
    assert.ok(
      turn && request,
      `spans: ${JSON.stringify(otlp.spans.filter((s) => s.traceId === traceId).map((s) => s.name))}`,
    );
    assert.equal(request.parentSpanId, CLIENT_SPAN);
    assert.equal(turn.parentSpanId, request.spanId);
    for (const chat of chats) {
      assert.equal(chat.parentSpanId, turn.spanId);
      assert.equal(chat.kind, 3 /* CLIENT */);
      assert.equal(chat.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(chat.attributes['gen_ai.provider.name'], 'openai-compatible');
      assert.equal(chat.attributes['gen_ai.request.model'], 'fake-model');
    }
    assert.equal(tool.parentSpanId, turn.spanId);
    assert.equal(tool.name, 'execute_tool builtin/read-file');
    assert.equal(tool.attributes['gen_ai.tool.name'], 'builtin/read-file');
    assert.equal(tool.attributes['gen_ai.tool.call.id'], 'call-1');
  });
});

describe('agents serve with an OTLP receiver that refuses every export', () => {
  let refusing: OtlpReceiver;
  let quiet: TeamServer;
  before(async () => {
    // 400 is not retried (OTLP/HTTP): each batch fails at once.
    refusing = await startOtlpReceiver({ refuse: 400 });
    quiet = await startTeamServer({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: refusing.url, OTEL_BSP_SCHEDULE_DELAY: '20' },
    });
  });
  after(async () => {
    await quiet?.close();
    await refusing?.close();
  });

  it('answers every request, logs the failure once for many failed batches, and serves no /metrics (off by default)', async () => {
    const admin = quiet.as(quiet.adminToken);
    let i = 0;
    await eventually(
      async () => {
        await admin.ok('SendMessage', {
          message: { messageId: `quiet-${i++}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
        });
        return refusing.refused.count >= 3 ? true : undefined;
      },
      15_000,
      'three refused exports',
    );
    // One more request: its access log line is written after whatever the refused batches logged
    // (they were answered before the receiver counted the third), so once it is read, so are they.
    await admin.ok('SendMessage', {
      message: { messageId: `quiet-${i++}`, role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    });
    const sends = (): number => quiet.process.stderr().split('"method":"SendMessage"').length - 1;
    await eventually(async () => Promise.resolve(sends() === i || undefined), 5000, 'every access log line');
    const lines = quiet.process
      .stderr()
      .split('\n')
      .filter((l) => l.includes('sending traces to the OTLP endpoint failed'));
    assert.equal(lines.length, 1, lines.join('\n'));
    const metrics = await fetch(`${quiet.baseUrl}/metrics`, {
      headers: { authorization: `Bearer ${quiet.adminToken}` },
    });
    assert.equal(metrics.status, 404);
  });
});

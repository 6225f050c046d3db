/**
 * End to end: `agents serve --metrics` with traces sent to an OTLP receiver started here. The
 * metrics are scraped as Prometheus does and parsed with a Prometheus text parser; the trace of a
 * SendMessage that carries a client's `traceparent` continues it, through the turn.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
// @ts-expect-error: the parser ships no types; its result is typed where it is used.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
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

let otlp: OtlpReceiver;
let server: TeamServer;

before(async () => {
  otlp = await startOtlpReceiver();
  server = await startTeamServer({
    env: { CLEVERAGENTS_METRICS: '1', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '50' },
  });
});

after(async () => {
  await server?.close();
  await otlp?.close();
});

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
    const res = await fetch(`${server.baseUrl}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        authorization: `Bearer ${server.adminToken}`,
        traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'trace-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
      }),
    });
    const body = (await res.json()) as { result?: unknown; error?: unknown };
    assert.ok(body.result, JSON.stringify(body));
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
});

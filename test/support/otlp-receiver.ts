/** An OTLP/HTTP trace receiver on 127.0.0.1 for tests: keeps the spans of every JSON `POST /v1/traces`. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL (what OTEL_EXPORTER_OTLP_ENDPOINT names). */
  url: string;
  spans: ReceivedSpan[];
  /** Bodies that could not be read. */
  errors: string[];
  /** Exports refused (with `refuse`). */
  refused: { count: number };
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

/** `refuse`: answer every export with this status (a receiver that is up but refuses), counting them. */
export async function startOtlpReceiver(opts: { refuse?: number } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const errors: string[] = [];
  const refused = { count: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (opts.refuse !== undefined) {
        refused.count++;
        res.writeHead(opts.refuse).end();
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
        res.writeHead(404).end();
        return;
      }
      let body: {
        resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
      };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch (err) {
        errors.push(`${String(err)} (content-encoding ${req.headers['content-encoding'] ?? 'none'})`);
        res.writeHead(400).end();
        return;
      }
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? []) {
            const attributes: Record<string, unknown> = {};
            for (const a of (s['attributes'] as Array<{ key: string; value: OtlpValue }> | undefined) ?? [])
              attributes[a.key] = valueOf(a.value);
            spans.push({
              traceId: s['traceId'] as string,
              spanId: s['spanId'] as string,
              ...(s['parentSpanId'] ? { parentSpanId: s['parentSpanId'] as string } : {}),
              name: s['name'] as string,
              kind: s['kind'] as number,
              attributes,
            });
          }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    errors,
    refused,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

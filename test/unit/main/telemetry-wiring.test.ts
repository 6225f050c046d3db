import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StartupError } from '../../../src/main/startup-errors.ts';
import { telemetrySettings } from '../../../src/main/telemetry-wiring.ts';

describe('telemetry settings', () => {
  it('are off by default', () => {
    assert.deepEqual(telemetrySettings({}, {}), { metrics: false, otlpEndpoint: undefined, batchDelayMs: undefined });
  });

  it('take the flags, else CLEVERAGENTS_METRICS and OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    const env = { CLEVERAGENTS_METRICS: '1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    assert.deepEqual(telemetrySettings({}, env), {
      metrics: true,
      otlpEndpoint: 'http://collector:4318',
      batchDelayMs: undefined,
    });
    assert.equal(
      telemetrySettings({ otlpEndpoint: 'https://otel.example/' }, env).otlpEndpoint,
      'https://otel.example/',
    );
    assert.equal(telemetrySettings({ metrics: true }, {}).metrics, true);
  });

  it('refuse an endpoint that is not an http(s) URL, and a metrics switch that is not 1 or 0, naming the setting', () => {
    assert.throws(
      () => telemetrySettings({ otlpEndpoint: 'collector:4318' }, {}),
      (e: unknown) => e instanceof StartupError && /--otlp-endpoint must be an http\(s\) URL/.test(e.message),
    );
    assert.throws(
      () => telemetrySettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://x' }),
      (e: unknown) => e instanceof StartupError && /OTEL_EXPORTER_OTLP_ENDPOINT must be/.test(e.message),
    );
    assert.throws(
      () => telemetrySettings({}, { CLEVERAGENTS_METRICS: 'yes' }),
      (e: unknown) => e instanceof StartupError && /CLEVERAGENTS_METRICS must be 1 or 0/.test(e.message),
    );
  });
});

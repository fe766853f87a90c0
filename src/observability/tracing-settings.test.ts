import { describe, expect, it } from 'vitest';
import { buildTracingSettings } from './tracing-settings.ts';

describe('tracing settings (OTEL_* variables)', () => {
  it('is off without an endpoint', () => {
    expect(buildTracingSettings({})).toEqual({ tracesUrl: null, serviceName: 'model-gateway', headers: {} });
  });

  it('appends /v1/traces to the base endpoint; the traces endpoint is used as is', () => {
    expect(buildTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracesUrl).toBe(
      'http://collector:4318/v1/traces',
    );
    const both = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces' };
    expect(buildTracingSettings(both).tracesUrl).toBe('https://b/otlp/traces');
    expect(buildTracingSettings({ ...both, OTEL_SDK_DISABLED: 'true' }).tracesUrl).toBeNull();
  });

  it('reads the service name and URL-encoded headers', () => {
    const settings = buildTracingSettings({
      OTEL_SERVICE_NAME: 'gw',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20abc, x-team = a=b ,bad',
    });
    expect(settings).toMatchObject({ serviceName: 'gw', headers: { authorization: 'Basic abc', 'x-team': 'a=b' } });
  });

  it('refuses grpc and a URL that is not http(s), naming the variable', () => {
    expect(() => buildTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
    expect(() => buildTracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/,
    );
  });
});

import { ConfigError } from '../errors/config-error.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** OpenTelemetry trace export (src/observability/tracing.ts): off unless an OTLP endpoint is set. */
export interface TracingSettings {
  /** The full traces URL (`.../v1/traces`); null: tracing is off. */
  readonly tracesUrl: string | null;
  readonly serviceName: string;
  /** Extra headers on each export (authentication of a collector). */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Reads the standard OTEL_* variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended), `OTEL_SERVICE_NAME`,
 * `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values URL-encoded). Spans go as OTLP/HTTP JSON
 * (`grpc` is refused). `OTEL_SDK_DISABLED=true` turns it off.
 */
export function buildTracingSettings(env: Env): TracingSettings {
  const protocol = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || env['OTEL_EXPORTER_OTLP_PROTOCOL'];
  if (protocol === 'grpc') throw new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc is not supported: spans are sent as OTLP/HTTP JSON');
  return {
    tracesUrl: env['OTEL_SDK_DISABLED'] === 'true' ? null : tracesUrlOf(env),
    serviceName: env['OTEL_SERVICE_NAME'] || 'model-gateway',
    headers: headersOf(env['OTEL_EXPORTER_OTLP_TRACES_HEADERS'] || env['OTEL_EXPORTER_OTLP_HEADERS'] || ''),
  };
}

function tracesUrlOf(env: Env): string | null {
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  const [variable, url] = traces
    ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces]
    : ['OTEL_EXPORTER_OTLP_ENDPOINT', base ? `${base.replace(/\/+$/, '')}/v1/traces` : ''];
  if (!url) return null;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new ConfigError(variable, 'expected an http(s) URL');
  return url;
}

function headersOf(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim()).toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

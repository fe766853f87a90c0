// The OpenTelemetry SDK, loaded by import() when tracing is configured (see README.md here, ADR 0016).
import * as api from '@opentelemetry/api';

export { api };
export { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
export { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
export { resourceFromAttributes } from '@opentelemetry/resources';

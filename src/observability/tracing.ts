import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Tracer } from '@opentelemetry/api';
import type { TracingSettings } from './tracing-settings.ts';
import type { RequestLogEntry } from '../request-log/request-log-store.ts';
import type { RequestTrail, TrailAttempt } from '../request-log/request-trail.ts';
import { enableTracePropagation, newSpanId, type TraceContext } from '../core/trace-context.ts';

/** What a settled request gives its trace: the entry, the trail, and its `performance.now()` start. */
export interface TracedRequest {
  readonly entry: RequestLogEntry;
  readonly trail: RequestTrail;
  readonly startedAt: number;
  readonly method: string;
}

export interface RequestTracer {
  /** Builds the request's spans (server span, a client span per executed attempt) and queues them for export. */
  record(request: TracedRequest): void;
  stop(): Promise<void>;
}

/** `gen_ai.provider.name` of each provider type (GenAI semantic conventions); other types give their own name. */
const genAiProviders: Readonly<Record<string, string>> = {
  azure: 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  vertex: 'gcp.vertex_ai',
  gemini: 'gcp.gemini',
};

const operations: Readonly<Record<string, string>> = {
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'chat',
  '/v1/responses': 'chat',
  '/v1/completions': 'text_completion',
  '/v1/embeddings': 'embeddings',
};

/**
 * Starts trace export when an OTLP endpoint is configured (ADR 17); null otherwise. The
 * OpenTelemetry SDK is loaded here, lazily, so a gateway without tracing never loads it.
 * `providerTypes` maps instance names to their provider type.
 */
export async function startTracing(settings: TracingSettings, providerTypes: ReadonlyMap<string, string>): Promise<RequestTracer | null> {
  if (settings.tracesUrl === null) return null;
  const { TracerProvider, BatchSpanProcessor, OTLPTraceExporter, resourceFromAttributes, api } = await import('../lazy/opentelemetry.ts');
  const ids = new PresetIds();
  const exporter = new OTLPTraceExporter({ url: settings.tracesUrl, headers: { ...settings.headers } });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
  });
  enableTracePropagation();
  const tracer = provider.getTracer('model-gateway');
  return {
    record: (request) => {
      const trace = request.trail.trace;
      if (trace !== null) emitSpans(tracer, api, ids, trace, request, providerTypes);
    },
    stop: () => provider.shutdown(),
  };
}

/** Span ids chosen by the gateway (its server span's id went out in upstream `traceparent`s): the next ids handed to the SDK. */
class PresetIds {
  traceId: string | null = null;
  spanId: string | null = null;
  generateTraceId(): string {
    return this.traceId ?? newSpanId() + newSpanId();
  }
  generateSpanId(): string {
    const id = this.spanId ?? newSpanId();
    this.spanId = null;
    return id;
  }
}

type Api = typeof OtelApi;

function emitSpans(
  tracer: Tracer,
  api: Api,
  ids: PresetIds,
  trace: TraceContext,
  request: TracedRequest,
  types: ReadonlyMap<string, string>,
): void {
  const { entry, trail } = request;
  const origin = performance.timeOrigin;
  const operation = operations[trail.endpoint] ?? trail.endpoint;
  const parent =
    trace.parentSpanId === null
      ? api.ROOT_CONTEXT
      : api.trace.setSpanContext(api.ROOT_CONTEXT, {
          traceId: trace.traceId,
          spanId: trace.parentSpanId,
          traceFlags: api.TraceFlags.SAMPLED,
          isRemote: true,
        });
  ids.traceId = trace.traceId;
  ids.spanId = trace.spanId;
  const server = tracer.startSpan(
    `${operation} ${entry.modelRequested ?? ''}`.trim(),
    { kind: api.SpanKind.SERVER, startTime: origin + request.startedAt, attributes: serverAttributes(request, operation, types) },
    parent,
  );
  if (entry.rateLimit !== null) server.addEvent('gateway.rate_limit.rejected', { ...entry.rateLimit });
  server.addEvent(entry.cacheHit ? 'gateway.cache.hit' : 'gateway.cache.miss');
  const inside = api.trace.setSpan(api.ROOT_CONTEXT, server);
  for (const [index, attempt] of (trail.attempts ?? []).entries()) {
    if (attempt.startedAt === undefined) {
      server.addEvent('gateway.attempt.skipped', { 'gen_ai.provider.name': attempt.provider, reason: attempt.outcome, index });
      continue;
    }
    ids.spanId = attempt.spanId ?? null;
    const start = origin + attempt.startedAt;
    const client = tracer.startSpan(
      `${operation} ${attempt.model}`,
      { kind: api.SpanKind.CLIENT, startTime: start, attributes: attemptAttributes(attempt, operation, types) },
      inside,
    );
    if (attempt.outcome !== 'ok') client.setStatus({ code: api.SpanStatusCode.ERROR, message: attempt.errorCode ?? 'failed' });
    client.end(start + (attempt.latencyMs ?? 0));
  }
  ids.traceId = null;
  if (entry.status >= 500) server.setStatus({ code: api.SpanStatusCode.ERROR, message: entry.errorCode ?? String(entry.status) });
  server.end(origin + request.startedAt + entry.latencyMs);
}

function serverAttributes({ entry, method }: TracedRequest, operation: string, types: ReadonlyMap<string, string>): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': operation,
    'http.request.method': method,
    'http.route': entry.endpoint,
    'http.response.status_code': entry.status,
    'gateway.request_id': entry.id,
    'gateway.user_path': entry.userPath,
    'gateway.cache_hit': entry.cacheHit,
    'gen_ai.usage.input_tokens': entry.promptTokens,
    'gen_ai.usage.output_tokens': entry.completionTokens,
  };
  if (entry.modelRequested !== null) attributes['gen_ai.request.model'] = entry.modelRequested;
  if (entry.model !== null) attributes['gen_ai.response.model'] = entry.model;
  if (entry.provider !== null) {
    attributes['gen_ai.provider.name'] = genAiProviderOf(entry.provider, types);
    attributes['gateway.provider.instance'] = entry.provider;
  }
  if (entry.virtualModel !== null) attributes['gateway.virtual_model'] = entry.virtualModel;
  if (entry.errorCode !== null) attributes['error.type'] = entry.errorCode;
  if (entry.ttftMs !== null) attributes['gateway.ttft_ms'] = entry.ttftMs;
  if (entry.costUsd !== null) attributes['gateway.cost_usd'] = entry.costUsd;
  return attributes;
}

function attemptAttributes(attempt: TrailAttempt, operation: string, types: ReadonlyMap<string, string>): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': genAiProviderOf(attempt.provider, types),
    'gen_ai.request.model': attempt.model,
    'gateway.provider.instance': attempt.provider,
  };
  if (attempt.status !== undefined) attributes['http.response.status_code'] = attempt.status;
  if (attempt.outcome === 'ok') attributes['gen_ai.response.model'] = attempt.model;
  if (attempt.errorCode) attributes['error.type'] = attempt.errorCode;
  return attributes;
}

function genAiProviderOf(instance: string, types: ReadonlyMap<string, string>): string {
  const type = types.get(instance) ?? instance;
  return genAiProviders[type] ?? type;
}

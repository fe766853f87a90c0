import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { chatRequests } from '../support/upstream.ts';
import { chat, closeAll, instancesEnv, startMocks } from '../support/virtual-models.ts';

// Issue 16: OpenTelemetry traces (ADR 16). A server span per model request, a client span per
// upstream attempt, GenAI attributes, the client's traceparent as parent and each attempt's
// span as the parent named upstream; OTLP/HTTP JSON to a receiver on loopback. With no OTLP
// endpoint nothing is exported and upstreams get no traceparent.

const configYaml = `
virtual_models:
  - name: fo-alias
    strategy: failover
    targets:
      - { provider: openai, model: fo-500 }
      - { provider: openai-b, model: fo-500 }
`;

const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
const clientSpan = '00f067aa0ba902b7';

const requestIdOf = (reply: { headers: Record<string, unknown> }): string => String(reply.headers['x-request-id']);

describe('tracing on (OTLP/HTTP JSON, request log off)', () => {
  let mocks: MockUpstream[];
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [mocks, receiver] = await Promise.all([startMocks(2), startOtlpReceiver()]);
    mocks[0]?.setBehavior('fo-500', { kind: 'error', status: 500 });
    const env = instancesEnv(mocks, ['mock-model', 'fo-500'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=s3cret',
      OTEL_SERVICE_NAME: 'gateway-under-test',
      REQUEST_LOG_ENABLED: 'false',
      UPSTREAM_RETRIES: '0',
    });
    gateway = await startGateway({ env, configYaml });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([closeAll(mocks ?? []), receiver?.close()]);
  });

  const serverSpanOf = async (requestId: string): Promise<ReceivedSpan> => {
    await receiver.waitFor((spans) => spans.some((span) => span.attributes['gateway.request_id'] === requestId));
    const span = receiver.spans.find((candidate) => candidate.attributes['gateway.request_id'] === requestId);
    if (span === undefined) throw new Error('no server span');
    return span;
  };

  it('exports a server span under the client traceparent and a client span per failover attempt, each named upstream', async () => {
    const reply = await chat(gateway, 'fo-alias', { headers: { traceparent: `00-${clientTrace}-${clientSpan}-01` } });
    expect(reply.status, reply.text).toBe(200);
    const server = await serverSpanOf(requestIdOf(reply));
    expect(server).toMatchObject({
      traceId: clientTrace,
      parentSpanId: clientSpan,
      kind: 2,
      name: 'chat fo-alias',
      service: 'gateway-under-test',
    });
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'fo-alias',
      'gen_ai.response.model': 'fo-500',
      'gen_ai.provider.name': 'openai',
      'gateway.provider.instance': 'openai-b',
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
      'http.response.status_code': 200,
      'http.request.method': 'POST',
      'gateway.virtual_model': 'fo-alias',
    });
    expect(server.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    await receiver.waitFor((spans) => spans.filter((span) => span.parentSpanId === server.spanId).length === 2);
    const children = receiver.spans.filter((span) => span.parentSpanId === server.spanId);
    children.sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
    const [failed, served] = children;
    expect(failed).toMatchObject({ traceId: clientTrace, kind: 3, name: 'chat fo-500', status: { code: 2 } });
    expect(failed?.attributes).toMatchObject({
      'gateway.provider.instance': 'openai',
      'http.response.status_code': 500,
      'error.type': 'upstream_error',
    });
    expect(served?.attributes).toMatchObject({ 'gateway.provider.instance': 'openai-b', 'gen_ai.response.model': 'fo-500' });
    expect(BigInt(server.startTimeUnixNano) <= BigInt(failed?.startTimeUnixNano ?? 0)).toBe(true);
    expect(BigInt(served?.endTimeUnixNano ?? 0) <= BigInt(server.endTimeUnixNano)).toBe(true);
    // Each upstream saw its own attempt's span as the parent, in the client's trace.
    const sent = [chatRequests(mocks[0] as MockUpstream), chatRequests(mocks[1] as MockUpstream)].map(
      (list) => list.at(-1)?.headers['traceparent'],
    );
    expect(sent).toEqual([`00-${clientTrace}-${failed?.spanId}-01`, `00-${clientTrace}-${served?.spanId}-01`]);
    expect(receiver.exports[0]?.['x-collector-token']).toBe('s3cret');
  });

  it('starts a new trace when the client sends none, and propagates it upstream', async () => {
    const reply = await chat(gateway, 'openai/mock-model');
    expect(reply.status, reply.text).toBe(200);
    const server = await serverSpanOf(requestIdOf(reply));
    expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(server.traceId).not.toBe(clientTrace);
    expect(server.parentSpanId).toBe('');
    await receiver.waitFor((spans) => spans.some((span) => span.parentSpanId === server.spanId));
    const child = receiver.spans.find((span) => span.parentSpanId === server.spanId);
    expect(chatRequests(mocks[0] as MockUpstream).at(-1)?.headers['traceparent']).toBe(`00-${server.traceId}-${child?.spanId}-01`);
  });

  it('records a refused request (401) as a server span with its error', async () => {
    const reply = await chat(gateway, 'openai/mock-model', { token: 'wrong' });
    expect(reply.status).toBe(401);
    const server = await serverSpanOf(requestIdOf(reply));
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': expect.any(String) });
  });
});

describe('tracing off (no OTLP endpoint)', () => {
  let mock: MockUpstream[];
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [mock, receiver] = await Promise.all([startMocks(1), startOtlpReceiver()]);
    // The receiver is there but not configured: nothing must reach it.
    gateway = await startGateway({ env: instancesEnv(mock, ['mock-model'], { OTEL_SERVICE_NAME: 'unused' }) });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([closeAll(mock ?? []), receiver?.close()]);
  });

  it('exports nothing and sends no traceparent upstream, even when the client sent one', async () => {
    const reply = await chat(gateway, 'openai/mock-model', { headers: { traceparent: `00-${clientTrace}-${clientSpan}-01` } });
    expect(reply.status, reply.text).toBe(200);
    expect(chatRequests(mock[0] as MockUpstream).at(-1)?.headers['traceparent']).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(receiver.exports).toHaveLength(0);
    const metrics = await call(gateway, '/metrics', { token: null });
    expect(metrics.status).toBe(404);
  });
});

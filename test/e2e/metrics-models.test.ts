import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { chat, closeAll, instancesEnv, startMocks } from '../support/virtual-models.ts';

// Issue 16: Prometheus metrics of model requests, by provider, model and status, read from
// each settled request (src/observability/model-metrics.ts), scraped from /metrics.

const configYaml = `
virtual_models:
  - name: fo-alias
    strategy: failover
    targets:
      - { provider: openai, model: fo-500 }
      - { provider: openai-b, model: fo-500 }
rate_limits:
  user_paths:
    - path: /limited
      limits: [{ period: minute, max_requests: 1 }]
`;

describe('model metrics on /metrics', () => {
  let mocks: MockUpstream[];
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(2);
    mocks[0]?.setBehavior('fo-500', { kind: 'error', status: 500 });
    const env = instancesEnv(mocks, ['mock-model', 'fo-500'], {
      METRICS_ENABLED: 'true',
      REQUEST_LOG_ENABLED: 'false',
      RESPONSE_CACHE_ENABLED: 'true',
      UPSTREAM_RETRIES: '0',
    });
    gateway = await startGateway({ env, configYaml });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  it('has duration, tokens, first token, upstream errors, rate-limit rejections and cache hits', async () => {
    expect((await chat(gateway, 'fo-alias', { headers: { 'cache-control': 'no-store' } })).status).toBe(200);
    const stream = await chat(gateway, 'openai/mock-model', { extra: { stream: true }, headers: { 'cache-control': 'no-store' } });
    expect(stream.status).toBe(200);
    expect((await chat(gateway, 'openai/mock-model', { headers: { 'x-user-path': '/limited', 'cache-control': 'no-store' } })).status).toBe(
      200,
    );
    expect((await chat(gateway, 'openai/mock-model', { headers: { 'x-user-path': '/limited', 'cache-control': 'no-store' } })).status).toBe(
      429,
    );
    const cached = { extra: { temperature: 0 } };
    expect((await chat(gateway, 'openai/mock-model', cached)).status).toBe(200);
    const hit = await chat(gateway, 'openai/mock-model', cached);
    expect(hit.headers['x-cache']).toBe('HIT');
    // Entries settle when their responses end: poll the scrape.
    let text = '';
    for (let tries = 0; tries < 50 && !text.includes('gateway_cache_hits_total{model="openai/mock-model"} 1'); tries += 1) {
      const scrape = await call(gateway, '/metrics', { token: null });
      expect(scrape.status).toBe(200);
      text = scrape.text;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(text).toContain('gateway_model_request_duration_seconds_count{provider="openai-b",model="fo-500",status="200"} 1');
    expect(text).toContain('gateway_upstream_errors_total{provider="openai",code="upstream_error"} 1');
    expect(text).toMatch(/gateway_tokens_per_request_count\{provider="openai-b",model="fo-500",status="200",type="output"\} 1/);
    expect(text).toMatch(/gateway_time_to_first_token_seconds_count\{provider="openai",model="mock-model"\} 1\n/);
    expect(text).toContain('gateway_rate_limit_rejections_total{scope="user_path",period="minute",kind="requests"} 1');
    expect(text).toContain('gateway_model_request_duration_seconds_count{provider="none",model="none",status="429"} 1');
    expect(text).toContain('gateway_cache_hits_total{model="openai/mock-model"} 1');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type GatewayProcess } from '../support/gateway-process.ts';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.ts';

describe('GET /metrics', () => {
  let mock: MockUpstream;
  let enabled: GatewayProcess;
  let disabled: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const env = { MASTER_KEY: 'metrics-master', OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: mock.url, OPENAI_MODELS: 'mock-model' };
    [enabled, disabled] = await Promise.all([startGateway({ env: { ...env, METRICS_ENABLED: 'true' } }), startGateway({ env })]);
  });

  afterAll(async () => {
    await Promise.all([enabled.stop(), disabled.stop()]);
    await mock.close();
  });

  it('counts requests by route pattern and serving provider, without auth', async () => {
    for (let index = 0; index < 3; index += 1) {
      const response = await request(`${enabled.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer metrics-master', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/mock-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.statusCode).toBe(200);
      await response.body.text();
    }
    const metrics = await request(`${enabled.url}/metrics`);
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    const text = await metrics.body.text();
    expect(text).toContain('gateway_requests_total{endpoint="/v1/chat/completions",provider="openai",status="200",stream="false"} 3');
    expect(text).toMatch(/gateway_request_duration_seconds_count\{endpoint="\/v1\/chat\/completions",provider="openai",stream="false"\} 3/);
  });

  it('is a 404 when METRICS_ENABLED is off', async () => {
    const response = await request(`${disabled.url}/metrics`);
    expect(response.statusCode).toBe(404);
    await response.body.text();
  });
});

describe('GET /metrics with METRICS_AUTH=true', () => {
  let gateway: GatewayProcess;
  const call = (token?: string) =>
    request(`${gateway.url}/metrics`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  const keyWithRole = async (role: string): Promise<string> => {
    const created = await request(`${gateway.url}/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: 'Bearer metrics-master', 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${role}-key`, role }),
    });
    expect(created.statusCode).toBe(201);
    return String(((await created.body.json()) as Record<string, unknown>)['key']);
  };

  beforeAll(async () => {
    gateway = await startGateway({ env: { MASTER_KEY: 'metrics-master', METRICS_ENABLED: 'true', METRICS_AUTH: 'true' } });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('needs the master key or an admin or viewer key', async () => {
    const anonymous = await call();
    expect(anonymous.statusCode).toBe(401);
    expect(((await anonymous.body.json()) as { error: { code: string } }).error.code).toBe('missing_credentials');
    const master = await call('metrics-master');
    expect(master.statusCode).toBe(200);
    expect(await master.body.text()).toContain('gateway_requests_total');
    for (const role of ['viewer', 'admin']) {
      const reply = await call(await keyWithRole(role));
      expect(reply.statusCode, role).toBe(200);
      await reply.body.text();
    }
    const user = await call(await keyWithRole('user'));
    expect(user.statusCode).toBe(403);
    expect(((await user.body.json()) as { error: { code: string } }).error.code).toBe('admin_required');
  });
});

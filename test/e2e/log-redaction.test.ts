import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, chatBody, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 15 defect 7: a credential in the query string never reaches the logs, whether the
// request is accepted, refused with 401 or unknown; other parameters stay readable.

describe('secrets in query strings are redacted from the logs', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', LOG_LEVEL: 'debug' }), startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('redacts api_key, key, token, access_token and x-api-key on accepted, 401 and 404 requests', async () => {
    const accepted = await rawRequest(`${gateway.url}/v1/chat/completions?api_key=sk-secret-accepted&trace=visible-1`, {
      headers: bearer(),
      body: chatBody('openai/mock-model'),
    });
    expect(accepted.status).toBe(200);
    const refused = await rawRequest(`${gateway.url}/v1/models?key=sk-secret-refused&x-api-key=sk-secret-dash`);
    expect(refused.status).toBe(401);
    const wrongKey = await rawRequest(`${gateway.url}/v1/chat/completions?token=sk-secret-token`, {
      headers: bearer('wrong-key'),
      body: chatBody('openai/mock-model'),
    });
    expect(wrongKey.status).toBe(401);
    const admin = await rawRequest(`${gateway.url}/admin/budgets?access_token=sk-secret-admin&API_KEY=sk-secret-upper`);
    expect(admin.status).toBe(401);
    const unknown = await rawRequest(`${gateway.url}/v1/nowhere?Api-Key=sk-secret-unknown`, { headers: bearer() });
    expect(unknown.status).toBe(404);

    await expect
      .poll(() => gateway.logs().filter((line) => line['msg'] === 'request completed').length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(5);
    const output = gateway.output.join('\n');
    expect(output).not.toMatch(/sk-secret/);
    const urls = gateway.logs().flatMap((line) => (typeof line['url'] === 'string' ? [line['url']] : []));
    expect(urls).toContain('/v1/chat/completions?api_key=[REDACTED]&trace=visible-1');
    expect(urls).toContain('/v1/models?key=[REDACTED]&x-api-key=[REDACTED]');
    expect(urls).toContain('/admin/budgets?access_token=[REDACTED]&API_KEY=[REDACTED]');
  });
});

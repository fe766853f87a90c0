import { request as httpRequest } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { adminUsage } from '../support/admin.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { eventually } from '../support/wait.ts';

// Issue 15 defect 11: the user path header carries UTF-8 bytes; `/é` is `/é` in usage
// records, reports and rate limits, never its latin1 reading `/Ã©`.

/** POSTs a chat request whose user path header holds the raw bytes given. */
async function chatWithPathBytes(gateway: GatewayProcess, pathBytes: Buffer): Promise<{ status: number; text: string }> {
  const body = JSON.stringify(chatBody('openai/mock-model'));
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${MASTER_KEY}`,
        'content-type': 'application/json',
        // Node writes header strings as latin1: one character per byte, the bytes go out as they are.
        'x-user-path': pathBytes.toString('latin1'),
      },
    });
    outgoing.once('error', reject);
    outgoing.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    // A Buffer: with a string body Node writes the headers in the body's encoding (UTF-8).
    outgoing.end(Buffer.from(body));
  });
}

describe('UTF-8 user paths', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model' }), startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('records and reports /é, and a rate limit on /é set through the admin API applies to it', async () => {
    const rule = await call(gateway, '/admin/rate-limits', {
      method: 'PUT',
      body: { user_path: '/é', limit_key: { period: 'minute' }, max_requests: 1 },
    });
    expect(rule.status, rule.text).toBe(200);

    const first = await chatWithPathBytes(gateway, Buffer.from('/é', 'utf8'));
    expect(first.status, first.text).toBe(200);
    const second = await chatWithPathBytes(gateway, Buffer.from('/é/sub', 'utf8'));
    expect(second.status, second.text).toBe(429);
    expect(JSON.parse(second.text)).toMatchObject({ error: { code: 'rate_limit_exceeded' } });

    const rows = await eventually(async () => {
      const found = await adminUsage(gateway, { group_by: 'user_path' });
      return found.has('/é') ? found : undefined;
    }, 'the usage row of /é');
    expect(rows.get('/é')?.requests).toBe(1);
    expect([...rows.keys()].filter((key) => key.includes('Ã'))).toEqual([]);
    const filtered = await adminUsage(gateway, { group_by: 'user_path', user_path: '/é' });
    expect([...filtered.keys()]).toEqual(['/é']);
  });

  it('answers 400 invalid_user_path to bytes that are not UTF-8', async () => {
    const reply = await chatWithPathBytes(gateway, Buffer.from([0x2f, 0xe9, 0x74, 0xe9]));
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.text)).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_user_path' } });
  });
});

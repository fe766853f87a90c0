import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';

// README "Usage tracking": every executed request is recorded, whatever cuts it. A stream
// still running when SHUTDOWN_TIMEOUT_SECONDS runs out is cut by the gateway; its relay must
// report before the usage recorder's last flush, so the record is in the database after exit.

/** Starts a stream and resolves once its first bytes arrived, with the request id and the rest of the body. */
async function startStream(
  gateway: GatewayProcess,
  path: string,
  body: Record<string, unknown>,
): Promise<{ requestId: string; rest: Promise<string> }> {
  const response = await request(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(), 'content-type': 'application/json', 'x-user-path': '/cut' },
    body: JSON.stringify(body),
  });
  expect(response.statusCode).toBe(200);
  const chunks = response.body[Symbol.asyncIterator]();
  const first = await chunks.next();
  expect(first.done).toBe(false);
  const rest = (async () => {
    let text = '';
    try {
      for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) text += String(next.value);
    } catch {
      // The gateway closes the connection at the deadline.
    }
    return text;
  })();
  return { requestId: String(response.headers['x-request-id']), rest };
}

describe.each(backendNames)('streams cut at the shutdown deadline on %s', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;

  beforeAll(async () => {
    // 400 chunks 50 ms apart: 20 s, far beyond the 1 s deadline.
    mock = await startMockUpstream({ chunkCount: 400, chunkDelayMs: 50 });
    database = await createGatewayDatabase(backendName);
  });

  afterAll(async () => {
    await database?.dispose();
    await mock?.close();
  });

  it('keeps a usage record of every stream the deadline cut, and exits 0', async () => {
    const configYaml = `providers:\n  compat: { type: openai-compatible, api_key: sk-compat, base_url: "${mock.url}", models: [mock-model] }\n`;
    const gateway = await startGateway({ env: gatewayEnv(mock, { SHUTDOWN_TIMEOUT_SECONDS: '1', ...database.env }), configYaml });
    try {
      const streams = await Promise.all([
        startStream(gateway, '/v1/chat/completions', chatBody('openai/mock-model', { stream: true })),
        startStream(gateway, '/v1/responses', { model: 'compat/mock-model', input: 'Say hello', stream: true }),
        startStream(gateway, '/v1/messages', {
          model: 'openai/mock-model',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'Say hello' }],
          stream: true,
        }),
      ]);
      const exitCode = await gateway.stop('SIGTERM');
      expect(exitCode, gateway.output.slice(-20).join('\n')).toBe(0);
      // None got to its end: the chat [DONE], the Responses response.completed, the Messages message_stop.
      for (const stream of streams) expect(await stream.rest).not.toMatch(/\[DONE\]|response\.completed|message_stop/);
      // Each ends with its dialect's error event, so a client SDK raises a clear error instead of
      // a network one (openai: APIError, not `TypeError: terminated`).
      const [chat, responses, messages] = await Promise.all(streams.map((stream) => stream.rest));
      expect(chat).toMatch(/data: \{"error":\{[^\n]*"code":"shutting_down"/);
      expect(responses).toMatch(/event: error\ndata: [^\n]*shutting_down/);
      expect(messages).toMatch(/event: error\ndata: [^\n]*shutting down/);

      const storage = await database.open(gateway);
      try {
        for (const { requestId } of streams) {
          const records = await storage.usage.findByRequestId(requestId);
          expect(records, `usage record of ${requestId}\n${gateway.output.slice(-20).join('\n')}`).toHaveLength(1);
          expect(records[0]?.stream).toBe(true);
          expect([499, 502]).toContain(records[0]?.status);
        }
      } finally {
        await storage.close();
      }
      expect(gateway.logs().filter((line) => /usage records could not be written/.test(String(line['msg'])))).toEqual([]);
    } finally {
      await gateway.kill();
    }
  });
});

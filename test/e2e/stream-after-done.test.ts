import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, rawRequest } from '../support/http.ts';
import { parseSse } from '../support/streams.ts';

// An upstream that sends `data: [DONE]` and then keeps its stream open: the client gets its
// whole stream at [DONE] (ADR 0024), and the gateway lets the upstream go 2 s later instead of
// holding its socket until undici's body timeout (minutes).

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe('an upstream stream that stays open after [DONE]', () => {
  let upstream: Server;
  let gateway: GatewayProcess;
  const closedAfterDone: number[] = [];

  beforeAll(async () => {
    upstream = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(chunk({ role: 'assistant', content: 'Hi' }) + chunk({}, 'stop') + 'data: [DONE]\n\n');
        const doneAt = performance.now();
        // Never ends the response; only the gateway can close the connection.
        response.on('close', () => closedAfterDone.push(performance.now() - doneAt));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    gateway = await startGateway({
      env: { MASTER_KEY, OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_MODELS: 'mock-model' },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('answers the client whole at [DONE] and closes the upstream within a few seconds', async () => {
    const started = performance.now();
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(MASTER_KEY),
      body: chatBody('openai/mock-model', { stream: true }),
    });
    expect(reply.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_500);
    const chunks = parseSse(reply.text);
    expect(chunks.map((entry) => entry['provider'])).toEqual(['openai', 'openai']);
    await expect.poll(() => closedAfterDone.length, { timeout: 6_000 }).toBe(1);
    expect(closedAfterDone[0]).toBeGreaterThan(1_500);
    expect(closedAfterDone[0]).toBeLessThan(5_000);
  });
});

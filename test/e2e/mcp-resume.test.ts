import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { rawMcpRequest } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';
import { testServices } from '../support/services.ts';

// Resumable Streamable HTTP streams (ADR 0034): a tool call's SSE stream starts with an event id
// and a `retry`; the client drops it mid-call and reconnects with Last-Event-ID, on the same
// gateway (memory store) or on another replica sharing Redis, and gets the answer it missed.

const postHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const protocolVersion = '2025-11-25';

interface SseEvent {
  readonly id?: string;
  readonly retry?: number;
  readonly data: string;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const fields = new Map(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
      const retry = fields.get('retry');
      return { id: fields.get('id'), retry: retry === undefined ? undefined : Number(retry), data: fields.get('data') ?? '' };
    });
}

/** Opens a session on `url` and starts a 1.5 s tool call whose stream it drops after the first event; answers its ids. */
async function startDroppedCall(url: string): Promise<{ sessionId: string; firstEvent: SseEvent }> {
  const init = await rawMcpRequest(url, {
    headers: postHeaders,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'e2e', version: '1.0.0' } },
    }),
    until: /"result"/,
  });
  const sessionId = String(init.headers['mcp-session-id']);
  const sessionHeaders = { ...postHeaders, 'mcp-session-id': sessionId, 'mcp-protocol-version': protocolVersion };
  const initialized = await rawMcpRequest(url, {
    headers: sessionHeaders,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  const call = await rawMcpRequest(url, {
    headers: sessionHeaders,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 1500 } } }),
    // The connection drops as soon as the first event arrived.
    until: /\n\n/,
  });
  expect(call.status, call.text).toBe(200);
  const firstEvent = parseSse(call.text)[0];
  if (firstEvent === undefined) throw new Error(`no event on the tool call stream: ${call.text}`);
  return { sessionId, firstEvent };
}

/** A GET with Last-Event-ID, read until the missed answer arrived (`untilAnswer`) or to the stream's end. */
async function resume(
  url: string,
  sessionId: string,
  lastEventId: string,
  untilAnswer = true,
): Promise<{ status: number; events: SseEvent[] }> {
  const answer = await rawMcpRequest(url, {
    method: 'GET',
    headers: {
      accept: 'text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': protocolVersion,
      'last-event-id': lastEventId,
    },
    ...(untilAnswer ? { until: /"id":7/ } : {}),
  });
  return { status: answer.status, events: answer.status === 200 ? parseSse(answer.text) : [] };
}

/** Upstreams connect in the background: wait until the gateway lists alpha's tool. */
async function ready(gateway: GatewayProcess): Promise<GatewayProcess> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const reply = await fetch(`${gateway.url}/admin/mcp-servers`);
    const servers = (await reply.json()) as Array<{ slug: string; status: string; tool_count: number }>;
    if (servers.some((server) => server.slug === 'alpha' && server.status === 'connected' && server.tool_count > 0)) return gateway;
    if (Date.now() > deadline) throw new Error(`alpha not connected: ${JSON.stringify(servers)}`);
    await sleep(100);
  }
}

function expectAnswer(events: readonly SseEvent[]): void {
  const answer = events.find((event) => event.data.includes('"id":7'));
  expect(answer?.id, JSON.stringify(events)).toMatch(/:\d+$/);
  expect(JSON.parse(answer?.data ?? '{}'), answer?.data).toMatchObject({
    id: 7,
    result: { content: [{ type: 'text', text: 'alpha: slept 1500 ms' }] },
  });
}

describe('MCP resumable streams', () => {
  let upstream: McpFixture;
  const gateways: GatewayProcess[] = [];
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    HOST: '127.0.0.1',
    MCP_SERVERS: JSON.stringify({ alpha: { url: upstream.url } }),
    ...extra,
  });

  beforeAll(async () => {
    upstream = await startMcpFixture({ label: 'alpha', tools: ['sleep'] });
  });

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await upstream?.close();
  });

  it('memory store: the stream starts with an event id and retry; Last-Event-ID replays the answer the dropped stream missed', async () => {
    const gateway = await startGateway({ env: env() });
    gateways.push(gateway);
    await ready(gateway);
    const url = `${gateway.url}/mcp/alpha`;
    const { sessionId, firstEvent } = await startDroppedCall(url);
    expect(firstEvent).toMatchObject({ data: '', retry: 1000 });
    expect(firstEvent.id).toMatch(/:\d+$/);
    await sleep(2_000);
    const resumed = await resume(url, sessionId, firstEvent.id ?? '');
    expect(resumed.status).toBe(200);
    expectAnswer(resumed.events);
  });

  it.skipIf(!testServices.redis)(
    'Redis store: a client resumes through another replica; another endpoint or an unknown session gets 404',
    async () => {
      const shared = env({ REDIS_URL: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379' });
      const [first, second] = await Promise.all([startGateway({ env: shared }), startGateway({ env: shared })]);
      if (first === undefined || second === undefined) throw new Error('replicas did not start');
      gateways.push(first, second);
      await Promise.all([ready(first), ready(second)]);
      const { sessionId, firstEvent } = await startDroppedCall(`${first.url}/mcp/alpha`);
      await sleep(2_000);
      // The other replica replays from Redis and ends the stream with a retry: the client polls on.
      const resumed = await resume(`${second.url}/mcp/alpha`, sessionId, firstEvent.id ?? '', false);
      expect(resumed.status).toBe(200);
      expectAnswer(resumed.events);
      expect(resumed.events.at(-1)?.retry).toBe(1000);
      // Bound to its endpoint, and to a session that exists.
      expect((await resume(`${second.url}/mcp`, sessionId, firstEvent.id ?? '')).status).toBe(404);
      expect((await resume(`${second.url}/mcp/alpha`, 'no-such-session', firstEvent.id ?? '')).status).toBe(404);
    },
  );
});

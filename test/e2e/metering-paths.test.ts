import type { ServerResponse } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { spentOf, usageOf } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { admitted, bearer, call, chatBody, type RawReply, rawRequest } from '../support/http.ts';
import { imagesHandler } from '../support/mock-openai-extras.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { eventually } from '../support/wait.ts';

// One metering path (issue 27, items 6, 7, 17): passthrough streams and JSON answers of any
// size reserve at admission and are charged like chat; estimates multiply by `n`; a failed
// attempt costs 0, never "unknown".
//
// A mock stream reports 12 prompt and 5 completion tokens: $0.006 + $0.004 = $0.01 at these prices.

const configYaml = (mock: MockUpstream): string => `
providers:
  oai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${mock.url}
    models: [stream-model, n-model, big-embed, mock-model, error-500, img-model]
pricing:
  stream-model: { input_per_mtok: 500, output_per_mtok: 800 }
  n-model: { input_per_mtok: 1, output_per_mtok: 4 }
  img-model: { input_per_mtok: 1, output_per_mtok: 1 }
  big-embed: { input_per_mtok: 1000, output_per_mtok: 0 }
  mock-model: { input_per_mtok: 1000, output_per_mtok: 1600 }
virtual_models:
  - name: fo-cost
    strategy: failover
    targets:
      - { provider: oai, model: error-500 }
      - { provider: oai, model: mock-model }
`;

const streamCost = 0.01;

async function putBudget(gateway: GatewayProcess, userPath: string, amount: number): Promise<void> {
  const reply = await call(gateway, '/admin/budgets', { method: 'PUT', body: { user_path: userPath, period: 'daily', amount } });
  expect([200, 201], reply.text).toContain(reply.status);
}

const passthrough = (gateway: GatewayProcess, path: string, userPath: string, body: Record<string, unknown>): Promise<RawReply> =>
  rawRequest(`${gateway.url}/p/oai/v1/${path}`, { headers: { ...bearer(), 'x-user-path': userPath }, body });

const streamBody = (includeUsage: boolean): Record<string, unknown> =>
  chatBody('stream-model', { stream: true, max_tokens: 5, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) });

function expectRefusals(replies: RawReply[]): void {
  for (const reply of replies) {
    if (reply.status === 200) continue;
    expectEnvelope(reply, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget', param: null });
  }
}

/** An embeddings answer over 1 MiB whose `usage` comes last. */
function bigEmbeddings(response: ServerResponse): void {
  const embedding = JSON.stringify(Array.from({ length: 160_000 }, (_, index) => (index % 97) / 97));
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":${embedding}}],`);
  response.end('"model":"big-embed","usage":{"prompt_tokens":20,"total_tokens":20}}');
}

describe('one metering path', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.route('POST', '/embeddings', (_request, response) => bigEmbeddings(response));
    const images = imagesHandler([]);
    mock.route('POST', '/images/generations', (request, response) => void setTimeout(() => void images(request, response), 400));
    gateway = await startGateway({ env: { MASTER_KEY: 'test-master-key' }, configYaml: configYaml(mock), startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('charges passthrough streams to the budget: 8 sequential $0.01 streams on $0.02 pass twice', async () => {
    await putBudget(gateway, '/pt-seq', 0.02);
    const replies: RawReply[] = [];
    for (let index = 0; index < 8; index += 1) replies.push(await passthrough(gateway, 'chat/completions', '/pt-seq', streamBody(true)));
    expectRefusals(replies);
    expect(admitted(replies)).toBe(2);
    expect(replies[0]?.text).toContain('data: [DONE]');
    await eventually(async () => (Math.abs((await spentOf(gateway, '/pt-seq')) - 2 * streamCost) < 1e-9 ? true : undefined), 'spend');
    const row = await usageOf(gateway, '/pt-seq', 2);
    expect(row?.prompt_tokens).toBe(24);
    expect(row?.cost_usd).toBeCloseTo(0.02, 9);
  });

  it('charges a passthrough stream that reports no usage its estimate, never nothing', async () => {
    await putBudget(gateway, '/pt-nousage', 0.02);
    const replies: RawReply[] = [];
    for (let index = 0; index < 8; index += 1)
      replies.push(await passthrough(gateway, 'chat/completions', '/pt-nousage', streamBody(false)));
    expectRefusals(replies);
    expect(admitted(replies)).toBeGreaterThan(0);
    expect(admitted(replies)).toBeLessThanOrEqual(2);
    expect(await spentOf(gateway, '/pt-nousage')).toBeGreaterThanOrEqual(0.02);
  });

  it('reserves passthrough streams at admission: 8 concurrent streams on $0.02 stop at the budget', async () => {
    await putBudget(gateway, '/pt-par', 0.02);
    mock.setBehavior('stream-model', { kind: 'latency', ms: 400 });
    try {
      const replies = await Promise.all(
        Array.from({ length: 8 }, (_, index) => passthrough(gateway, 'chat/completions', `/pt-par/u${index}`, streamBody(true))),
      );
      expectRefusals(replies);
      expect(admitted(replies)).toBeGreaterThan(0);
      // Each holds its estimate (about $0.0165): the second hold passes the $0.02, the third is refused.
      expect(admitted(replies)).toBeLessThanOrEqual(2);
      await eventually(
        async () => (Math.abs((await spentOf(gateway, '/pt-par')) - admitted(replies) * streamCost) < 1e-9 ? true : undefined),
        'spend settled',
      );
    } finally {
      mock.reset(); // custom routes survive it
    }
  });

  it('reads the usage of a passthrough JSON answer over 1 MiB and charges it', async () => {
    await putBudget(gateway, '/pt-big', 0.02);
    const first = await passthrough(gateway, 'embeddings', '/pt-big', { model: 'big-embed', input: 'hello' });
    expect(first.status).toBe(200);
    expect(first.text.length).toBeGreaterThan(1024 * 1024);
    const row = await usageOf(gateway, '/pt-big');
    expect(row?.prompt_tokens).toBe(20);
    expect(row?.cost_usd).toBeCloseTo(0.02, 9);
    expectRefusals([await passthrough(gateway, 'embeddings', '/pt-big', { model: 'big-embed', input: 'hello' })]);
    expect((await passthrough(gateway, 'embeddings', '/pt-big', { model: 'big-embed', input: 'hello' })).status).toBe(429);
  });

  it('multiplies the estimate by n: six parallel n=100 requests on $0.02 admit one, routed or passthrough', async () => {
    mock.setBehavior('n-model', { kind: 'latency', ms: 400 });
    try {
      // max_tokens 50 at $4/M is $0.0002; times n = 100 it is the whole $0.02.
      const extra = { max_tokens: 50, n: 100 };
      await putBudget(gateway, '/n-chat', 0.02);
      const routed = await Promise.all(
        Array.from({ length: 6 }, () =>
          rawRequest(`${gateway.url}/v1/chat/completions`, {
            headers: { ...bearer(), 'x-user-path': '/n-chat' },
            body: chatBody('oai/n-model', extra),
          }),
        ),
      );
      expectRefusals(routed);
      expect(admitted(routed)).toBe(1);
      await putBudget(gateway, '/n-pt', 0.02);
      const relayed = await Promise.all(
        Array.from({ length: 6 }, () => passthrough(gateway, 'chat/completions', '/n-pt', chatBody('n-model', extra))),
      );
      expectRefusals(relayed);
      expect(admitted(relayed)).toBe(1);
    } finally {
      mock.reset(); // custom routes survive it
    }
  });

  it('multiplies an image estimate by its n: four parallel n=10 generations on $0.02 admit one', async () => {
    // 4096 output tokens at $1/M hold about $0.004 an image; ten images hold $0.04.
    await putBudget(gateway, '/n-img', 0.02);
    const replies = await Promise.all(
      Array.from({ length: 4 }, () =>
        rawRequest(`${gateway.url}/v1/images/generations`, {
          headers: { ...bearer(), 'x-user-path': '/n-img' },
          body: { model: 'oai/img-model', prompt: 'a lighthouse', n: 10 },
        }),
      ),
    );
    expectRefusals(replies);
    expect(admitted(replies)).toBe(1);
  });

  it('records a failed attempt at cost 0, so a failed-over range and a failed request have a known cost', async () => {
    const failedOver = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-user-path': '/fo-cost' },
      body: chatBody('fo-cost', { max_tokens: 5 }),
    });
    expect(failedOver.status, failedOver.text).toBe(200);
    const row = await usageOf(gateway, '/fo-cost', 2);
    expect(row?.requests).toBe(2);
    expect(row?.unpriced_requests).toBe(0);
    // The executed target's 12 + 5 tokens at $1000/$1600 per million; the failed one nothing.
    expect(row?.cost_usd).toBeCloseTo(0.02, 9);

    const failed = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-user-path': '/fail-cost' },
      body: chatBody('oai/error-500'),
    });
    expect(failed.status).toBe(500);
    const failedRow = await usageOf(gateway, '/fail-cost');
    expect(failedRow?.unpriced_requests).toBe(0);
    expect(failedRow?.cost_usd).toBe(0);
  });
});

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startMcpFixture, type McpFixture } from '../support/mcp-fixture-server.ts';
import { startGateway, type GatewayProcess } from '../support/gateway-process.ts';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.ts';
import { testRedisUrl, testServices } from '../support/services.ts';
import { bearer, call, chatBody, onEachConnection, onNewConnection } from '../support/http.ts';
import { gatewayEnv, MASTER_KEY } from '../support/gateway-process.ts';
import { parseSse } from '../support/streams.ts';
import { textOf } from '../support/mcp.ts';
import { abortableChat } from '../support/rate-limits.ts';

// WORKERS=2 (ADR 37, workers are replicas): a primary and two worker processes on one port,
// sharing counters and budget holds through Redis as replicas do. Each request below that must
// reach "another" worker goes on a connection of its own: the cluster hands new connections to
// the workers in turn.

const perWorkerLine = /^WORKERS=2 without a shared store: rate limits and budgets count per worker/;

const gatewayYaml = `
rate_limits:
  user_paths:
    - path: /exact
      limits: [{ period: hour, max_requests: 10 }]
pricing:
  mock-model: { input_per_mtok: 1000, output_per_mtok: 1600 }
`;

/** Worker id -> pid, from the workers' start lines. */
function workerPids(gateway: GatewayProcess): Map<number, number> {
  const pids = new Map<number, number>();
  for (const line of gateway.logs()) if (line['msg'] === 'worker listening') pids.set(Number(line['worker']), Number(line['pid']));
  return pids;
}

/** How many requests each worker completed (the `worker` field of its log lines). */
function completedByWorker(gateway: GatewayProcess): Map<number, number> {
  const counts = new Map<number, number>();
  for (const line of gateway.logs()) {
    if (line['msg'] === 'request completed') counts.set(Number(line['worker']), (counts.get(Number(line['worker'])) ?? 0) + 1);
  }
  return counts;
}

describe.skipIf(!testServices.redis)('WORKERS=2 on one Redis', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({
      env: gatewayEnv(mock, {
        OPENAI_MODELS: 'mock-model,slow-stream',
        WORKERS: '2',
        REDIS_URL: testRedisUrl,
        RATE_LIMITS_STORE: 'redis',
        RATE_LIMITS_REDIS_PREFIX: `workers-${randomUUID()}:`,
      }),
      configYaml: gatewayYaml,
    });
  });

  afterAll(async () => {
    await gateway?.kill();
    await mock?.close();
  });

  it('runs two workers that both serve requests on the one port', async () => {
    expect([...workerPids(gateway).keys()].sort()).toEqual([1, 2]);
    const replies = await Promise.all(
      Array.from({ length: 8 }, () =>
        onNewConnection(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('openai/mock-model') }),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array.from({ length: 8 }, () => 200));
    await sleep(100);
    const served = completedByWorker(gateway);
    expect(served.get(1), JSON.stringify([...served])).toBeGreaterThan(0);
    expect(served.get(2), JSON.stringify([...served])).toBeGreaterThan(0);
    // The counters are shared: nothing to say about counting per worker.
    expect(gateway.logs().some((line) => perWorkerLine.test(String(line['msg'])))).toBe(false);
  });

  it('rate limits hold across workers: exactly 10 of 40 parallel requests pass a cap of 10', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, () =>
        onNewConnection(`${gateway.url}/v1/chat/completions`, {
          headers: { ...bearer(), 'x-user-path': '/exact' },
          body: chatBody('openai/mock-model'),
        }),
      ),
    );
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(10);
    for (const reply of replies) if (reply.status !== 200) expect(reply.status, reply.text).toBe(429);
  });

  it('an API key created through one worker works on the other', async () => {
    const created = await onNewConnection(`${gateway.url}/admin/api-keys`, { headers: bearer(), body: { name: 'w', user_path: '/keys' } });
    expect(created.status, created.text).toBe(201);
    const key = String((JSON.parse(created.text) as { key: string }).key);
    await eventuallyTrue(async () => {
      const replies = await onEachConnection(
        `${gateway.url}/v1/chat/completions`,
        { headers: bearer(key), body: chatBody('openai/mock-model') },
        4,
      );
      return replies.every((reply) => reply.status === 200);
    }, 3_000);
  });

  it('a guardrail stored through one worker applies on the other', async () => {
    const put = await onNewConnection(`${gateway.url}/admin/guardrails`, {
      method: 'PUT',
      headers: bearer(),
      body: { name: 'falcon', type: 'deny_list', terms: ['project falcon'] },
    });
    expect(put.status, put.text).toBe(200);
    try {
      await eventuallyTrue(async () => {
        const replies = await onEachConnection(`${gateway.url}/v1/chat/completions`, {
          headers: bearer(),
          body: chatBody('openai/mock-model', { messages: [{ role: 'user', content: 'about Project Falcon' }] }),
        });
        return replies.every((reply) => reply.status === 400 && reply.headers['x-guardrail-blocked'] === 'falcon');
      }, 3_000);
    } finally {
      const removed = await onNewConnection(`${gateway.url}/admin/guardrails?name=falcon`, { method: 'DELETE', headers: bearer() });
      expect(removed.status, removed.text).toBe(200);
    }
  });

  it('budgets hold across workers: at most 11 of 50 parallel $0.02 requests pass a $0.20 budget', async () => {
    // 12 prompt + 5 completion tokens at these prices: $0.02 a request (test/e2e/budget-reservations.test.ts).
    const budget = await call(gateway, '/admin/budgets', { method: 'PUT', body: { user_path: '/par', period: 'daily', amount: 0.2 } });
    expect([200, 201], budget.text).toContain(budget.status);
    await eventuallyTrue(async () => {
      const listings = await onEachConnection(`${gateway.url}/admin/budgets`, { headers: bearer() }, 4);
      return listings.every((listing) => listing.text.includes('"user_path":"/par"'));
    }, 3_000);
    mock.setBehavior('mock-model', { kind: 'latency', ms: 400 });
    try {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          onNewConnection(`${gateway.url}/v1/chat/completions`, {
            headers: { ...bearer(), 'x-user-path': `/par/u${index % 7}` },
            body: chatBody('openai/mock-model', { max_tokens: 5 }),
          }),
        ),
      );
      const admitted = replies.filter((reply) => reply.status === 200).length;
      expect(admitted).toBeGreaterThan(0);
      // The holds are in Redis; per-worker holds would let each worker pass about 11.
      expect(admitted).toBeLessThanOrEqual(11);
      for (const reply of replies) if (reply.status !== 200) expect(reply.text).toContain('budget_exceeded');
    } finally {
      mock.reset();
    }
  });

  it('a worker that dies is replaced, and the instance keeps serving', async () => {
    const [worker, pid] = [...workerPids(gateway)][0] as [number, number];
    process.kill(pid, 'SIGKILL');
    await eventuallyLine(gateway, (line) => line['msg'] === 'worker died: starting another' && line['worker'] === worker);
    await eventuallyTrue(() => workerPids(gateway).size >= 3, 15_000);
    const replies = await onEachConnection(
      `${gateway.url}/v1/chat/completions`,
      { headers: bearer(), body: chatBody('openai/mock-model') },
      4,
    );
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
  });

  it('an MCP session opened on one worker is served whichever worker a request reaches', async () => {
    const fixture: McpFixture = await startMcpFixture({ label: 'alpha', tools: ['echo', 'add'] });
    const agents: Agent[] = [];
    try {
      const created = await call(gateway, '/admin/mcp-servers', { method: 'PUT', body: { slug: 'alpha', url: fixture.url } });
      expect([200, 201], created.text).toContain(created.status);
      // Every HTTP request of the SDK client on a new connection: they alternate between the workers.
      const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/alpha`), {
        requestInit: { headers: { authorization: `Bearer ${MASTER_KEY}` } },
        fetch: async (url, init) => {
          const agent = new Agent();
          agents.push(agent);
          const response = await undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent });
          // The notification stream (GET) stays open; every other answer is read whole.
          if (init?.method === 'GET') return response as unknown as Response;
          const body = await response.arrayBuffer();
          return new Response(body, { status: response.status, headers: response.headers as unknown as Headers });
        },
      });
      const client = new McpClient({ name: 'workers-e2e', version: '1.0.0' });
      await eventuallyTrue(async () => {
        try {
          await client.connect(transport);
          return true;
        } catch {
          return false;
        }
      }, 10_000);
      expect(transport.sessionId).toMatch(/^w\d+-/);
      // The session's worker connects to the new server in the background.
      await eventuallyTrue(async () => (await client.listTools()).tools.length === 2, 10_000);
      for (let index = 0; index < 6; index += 1) {
        expect(textOf(await client.callTool({ name: 'add', arguments: { a: index, b: 40 } }))).toBe(`alpha: ${index + 40}`);
      }
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['add', 'echo']);
      await client.close();
    } finally {
      await Promise.all(agents.map((agent) => agent.destroy()));
      await fixture.close();
    }
  });
});

async function eventuallyLine(
  gateway: GatewayProcess,
  matches: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await eventuallyTrue(() => (found = gateway.logs().find(matches)) !== undefined, 5_000);
  return found as Record<string, unknown>;
}

async function eventuallyTrue(probe: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

describe('WORKERS=2 without a shared store', () => {
  it('says at start that counters are per worker; SIGTERM drains both workers, then the primary exits 0', async () => {
    const mock = await startMockUpstream();
    const gateway = await startGateway({
      env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,slow-stream', WORKERS: '2' }),
      configYaml: 'rate_limits:\n  user_paths:\n    - path: /per\n      limits: [{ period: hour, max_requests: 1 }]\n',
    });
    try {
      const streams = [0, 1, 2, 3].map(() => abortableChat(gateway, '/drain', 'openai/slow-stream', { stream: true }));
      for (const stream of streams) expect((await stream.started).status).toBe(200);
      const said = gateway.logs().filter((line) => perWorkerLine.test(String(line['msg'])));
      expect(said.map((line) => line['level'])).toEqual([40]);
      // Each worker counts alone, as a replica on the memory store would: a cap of 1 passes once per worker.
      const capped = await onEachConnection(`${gateway.url}/v1/chat/completions`, {
        headers: { ...bearer(), 'x-user-path': '/per' },
        body: chatBody('openai/mock-model'),
      });
      expect(capped.map((reply) => reply.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
      const exited = gateway.stop('SIGTERM');
      const replies = await Promise.all(streams.map((stream) => stream.reply));
      for (const reply of replies) {
        expect(reply.status).toBe(200);
        expect(parseSse(reply.text).length).toBeGreaterThan(10);
      }
      expect(await exited).toBe(0);
      const logs = gateway.logs();
      const drained = new Set(logs.filter((line) => line['msg'] === 'shutdown complete').map((line) => line['worker']));
      expect([...drained].sort()).toEqual([1, 2]);
      expect(logs.some((line) => line['msg'] === 'all workers exited' && line['code'] === 0)).toBe(true);
      expect(logs.some((line) => line['msg'] === 'request completed' && line['worker'] === 1)).toBe(true);
      expect(logs.some((line) => line['msg'] === 'request completed' && line['worker'] === 2)).toBe(true);
    } finally {
      await gateway.kill();
      await mock.close();
    }
  });
});

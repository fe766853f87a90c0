import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { bearer, chatBody, onEachConnection, onNewConnection, type RawReply, type RawRequestOptions, statuses } from '../support/http.ts';
import { startMcpFixture, type McpFixture } from '../support/mcp-fixture-server.ts';
import { startGateway, type GatewayProcess } from '../support/gateway-process.ts';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.ts';
import { testRedisUrl, testServices } from '../support/services.ts';
import { gatewayEnv } from '../support/gateway-process.ts';
import { type RuleListing } from '../support/rate-limits.ts';
import { eventually } from '../support/wait.ts';
import { onBothWorkers, slowReloadEnv } from '../support/workers.ts';

// WORKERS=2 are replicas (ADR 37): what an admin write changed is in force on the worker that
// made it once the write is answered, and on the other within the replica re-read bound (the
// primary's nudge makes it at once in practice; RELOAD_INTERVAL_SECONDS=60 here, so only the
// nudge can meet `onBothWorkers`' bound). Counters are in Redis, shared by the workers. Each
// check repeats a request on six new connections, which the cluster hands to the workers in turn.

const gatewayYaml = `
pricing:
  mock-model: { input_per_mtok: 1000, output_per_mtok: 1600 }
`;

const clientInfo = { name: 'workers-admin', version: '1.0.0' };
const same = (count: number, status: number): number[] => Array.from({ length: count }, () => status);

describe.skipIf(!testServices.redis)('WORKERS=2: admin writes apply on every worker', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({
      env: gatewayEnv(mock, {
        OPENAI_MODELS: 'mock-model,wa-broken',
        WORKERS: '2',
        MCP_ENABLED: 'true',
        METRICS_ENABLED: 'true',
        REDIS_URL: testRedisUrl,
        RATE_LIMITS_STORE: 'redis',
        RATE_LIMITS_REDIS_PREFIX: `workers-admin-${randomUUID()}:`,
        ...slowReloadEnv,
      }),
      configYaml: gatewayYaml,
    });
  });

  afterAll(async () => {
    await gateway?.kill();
    await mock?.close();
  });

  /** An admin call on a new connection; the answer must be a success. */
  async function admin(path: string, options: RawRequestOptions = {}): Promise<RawReply> {
    const reply = await onNewConnection(`${gateway.url}${path}`, { headers: bearer(), ...options });
    expect(reply.status, `${options.method ?? 'GET'} ${path}: ${reply.text}`).toBeLessThan(300);
    return reply;
  }

  const chats = (model: string, token?: string, extra: Record<string, string> = {}): Promise<RawReply[]> =>
    onEachConnection(`${gateway.url}/v1/chat/completions`, { headers: { ...bearer(token), ...extra }, body: chatBody(model) });
  /** Chats on six connections until every one answers `status`. */
  const chatsBecome = (status: number, model: string, token?: string, extra: Record<string, string> = {}): Promise<RawReply[]> =>
    onBothWorkers(
      () => chats(model, token, extra),
      (replies) => replies.every((reply) => reply.status === status),
    );
  /** GETs `path` on six connections until every answer is accepted. */
  const listingsBecome = (path: string, accepted: (text: string) => boolean): Promise<RawReply[]> =>
    onBothWorkers(
      () => onEachConnection(`${gateway.url}${path}`, { headers: bearer() }),
      (replies) => replies.every((reply) => reply.status === 200 && accepted(reply.text)),
    );

  it('API keys: a PATCH, a rotation and a deactivation through one worker hold on both', async () => {
    const created = JSON.parse((await admin('/admin/api-keys', { body: { name: 'wa', user_path: '/wa' } })).text) as {
      id: string;
      key: string;
    };
    await chatsBecome(200, 'openai/mock-model', created.key);

    await admin(`/admin/api-keys/${created.id}`, { method: 'PATCH', body: { allowed_models: ['openai/wa-broken'] } });
    await chatsBecome(403, 'openai/mock-model', created.key);

    const rotated = JSON.parse((await admin(`/admin/api-keys/${created.id}/rotate`, { body: {} })).text) as { key: string };
    await chatsBecome(401, 'openai/wa-broken', created.key);
    await chatsBecome(200, 'openai/wa-broken', rotated.key);

    await admin(`/admin/api-keys/${created.id}/deactivate`, { body: {} });
    await chatsBecome(401, 'openai/wa-broken', rotated.key);
  });

  it('virtual models: a PUT and a DELETE through one worker show in /v1/models and route on both', async () => {
    await admin('/admin/virtual-models', {
      method: 'PUT',
      body: { name: 'wa-alias', targets: [{ provider: 'openai', model: 'mock-model' }] },
    });
    await listingsBecome('/v1/models', (text) => text.includes('"wa-alias"'));
    await chatsBecome(200, 'wa-alias');

    await admin('/admin/virtual-models', { method: 'DELETE', body: { name: 'wa-alias' } });
    await listingsBecome('/v1/models', (text) => !text.includes('"wa-alias"'));
    await chatsBecome(404, 'wa-alias');
  });

  it('failover rules: a PUT and a DELETE through one worker apply on both', async () => {
    mock.setBehavior('wa-broken', { kind: 'error', status: 500 });
    try {
      await admin('/admin/failover-rules', { method: 'PUT', body: { model: 'openai/wa-broken', fallbacks: ['openai/mock-model'] } });
      await chatsBecome(200, 'openai/wa-broken');
      await admin('/admin/failover-rules', { method: 'DELETE', body: { model: 'openai/wa-broken' } });
      await chatsBecome(500, 'openai/wa-broken');
    } finally {
      mock.reset();
    }
  });

  /** Until every worker lists a rule on `subject` (or none, with `present` false). */
  const ruleOnBoth = (subject: string, present = true): Promise<RawReply[]> =>
    listingsBecome(
      '/admin/rate-limits',
      (text) => present === (JSON.parse(text) as RuleListing).rate_limits.some((listed) => listed.subject === subject),
    );

  it('rate limits: a PUT, reset-one and DELETE through one worker hold on both; the counters are shared', async () => {
    const rule = { user_path: '/wa-rl', limit_key: { period: 'hour' }, max_requests: 1 };
    await admin('/admin/rate-limits', { method: 'PUT', body: rule });
    await ruleOnBoth('/wa-rl');
    const path = { 'x-user-path': '/wa-rl' };
    expect(statuses(await chats('openai/mock-model', undefined, path))).toEqual([200, ...same(5, 429)]);
    for (const listing of await onEachConnection(`${gateway.url}/admin/rate-limits`, { headers: bearer() })) {
      const rules = (JSON.parse(listing.text) as RuleListing).rate_limits.filter((listed) => listed.subject === '/wa-rl');
      expect(rules.map((listed) => listed.requests_used)).toEqual([1]);
    }
    await admin('/admin/rate-limits/reset-one', { body: { user_path: '/wa-rl', period: 'hour' } });
    expect(statuses(await chats('openai/mock-model', undefined, path))).toEqual([200, ...same(5, 429)]);
    await admin('/admin/rate-limits/reset', { body: { confirmation: 'reset' } });
    expect(statuses(await chats('openai/mock-model', undefined, path))).toEqual([200, ...same(5, 429)]);
    await admin('/admin/rate-limits', { method: 'DELETE', body: { user_path: '/wa-rl', limit_key: { period: 'hour' } } });
    await ruleOnBoth('/wa-rl', false);
    expect(statuses(await chats('openai/mock-model', undefined, path))).toEqual(same(6, 200));
  });

  it('rate limits: the tokens of a response count on the other worker (in Redis; but for one race under load)', async () => {
    // A mock answer uses more than 10 tokens: the first request is admitted, the next ones are over the cap.
    await admin('/admin/rate-limits', { method: 'PUT', body: { user_path: '/wa-tok', limit_key: { period: 'hour' }, max_tokens: 10 } });
    await ruleOnBoth('/wa-tok');
    for (let round = 0; round < 3; round += 1) {
      await admin('/admin/rate-limits/reset-one', { body: { user_path: '/wa-tok', period: 'hour' } });
      const replies = await chats('openai/mock-model', undefined, { 'x-user-path': '/wa-tok' });
      // The tokens are added to the shared counter as the answer ends; the next request, on the
      // other worker, can still be admitted first on a loaded machine: the second may pass.
      // Counted at all across workers, the third and later never do.
      const [first, second, ...rest] = statuses(replies);
      expect([first, rest], replies[1]?.text).toEqual([200, same(4, 429)]);
      expect([200, 429]).toContain(second);
    }
  });

  it('an API key created with a rate_limit shorthand is limited on both', async () => {
    const body = { name: 'wa-short', user_path: '/wa-short', rate_limit: { period: 'hour', max_requests: 2 } };
    const { key } = JSON.parse((await admin('/admin/api-keys', { body })).text) as { key: string };
    // Both workers know the key (a model listing is not counted) and its rule before the counted calls.
    await onBothWorkers(
      () => onEachConnection(`${gateway.url}/v1/models`, { headers: bearer(key) }),
      (replies) => replies.every((reply) => reply.status === 200),
    );
    await ruleOnBoth('/wa-short');
    expect(statuses(await chats('openai/mock-model', key))).toEqual([200, 200, ...same(4, 429)]);
  });

  it('guardrails: a PUT blocks and a DELETE stops blocking on both', async () => {
    await admin('/admin/guardrails', { method: 'PUT', body: { name: 'wa-deny', type: 'deny_list', terms: ['say hello'] } });
    await chatsBecome(400, 'openai/mock-model');
    await admin('/admin/guardrails?name=wa-deny', { method: 'DELETE' });
    await chatsBecome(200, 'openai/mock-model');
  });

  it('budgets: a PUT and a DELETE through one worker are listed and enforced on both', async () => {
    await admin('/admin/budgets', { method: 'PUT', body: { user_path: '/wa-b', period: 'daily', amount: 0.000001 } });
    await listingsBecome('/admin/budgets', (text) => text.includes('"user_path":"/wa-b"'));
    const path = { 'x-user-path': '/wa-b' };
    // The first request is admitted (nothing spent yet) and spends more than the amount.
    expect(
      (
        await onNewConnection(`${gateway.url}/v1/chat/completions`, {
          headers: { ...bearer(), ...path },
          body: chatBody('openai/mock-model'),
        })
      ).status,
    ).toBe(200);
    await eventually(
      async () =>
        (await onNewConnection(`${gateway.url}/admin/budgets`, { headers: bearer() })).text.includes('"remaining":0') ? true : undefined,
      'the spend',
      5_000,
    );
    await admin('/admin/budgets', { method: 'DELETE', body: { user_path: '/wa-b', period: 'daily' } });
    await listingsBecome('/admin/budgets', (text) => !text.includes('"user_path":"/wa-b"'));
    await chatsBecome(200, 'openai/mock-model', undefined, path);
  });

  it('budgets: the spend of a request is shown by both workers, in /admin/budgets and /v1/usage', async () => {
    await admin('/admin/budgets', { method: 'PUT', body: { user_path: '/wa-sp', period: 'daily', amount: 10 } });
    const served = await onNewConnection(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-user-path': '/wa-sp' },
      body: chatBody('openai/mock-model'),
    });
    expect(served.status, served.text).toBe(200);
    const spentIn = (text: string): number | undefined =>
      (JSON.parse(text) as { budgets: Array<{ user_path: string; spent: number }> }).budgets.find((budget) => budget.user_path === '/wa-sp')
        ?.spent;
    const spentEverywhere = async (): Promise<Array<number | undefined>> => {
      const listed = await onEachConnection(`${gateway.url}/admin/budgets`, { headers: bearer() });
      const mine = await onEachConnection(`${gateway.url}/v1/usage`, { headers: { ...bearer(), 'x-user-path': '/wa-sp' } });
      return [...listed, ...mine].map((reply) => spentIn(reply.text));
    };
    // As between replicas on one database: the other worker lists the spend once the usage batch
    // is written (USAGE_FLUSH_INTERVAL_MS) and its budget refresh has read it (BUDGETS_REFRESH_INTERVAL_SECONDS, 2 s).
    const spent = await eventually(
      async () => {
        const seen = await spentEverywhere();
        return (seen[0] ?? 0) > 0 && seen.every((value) => value === seen[0]) ? seen : undefined;
      },
      'the same spend listed by both workers',
      8_000,
    );
    expect(spent).toEqual(same(12, spent[0] as number));
  });

  it('POST /admin/reload through one worker reloads the configuration file on both', async () => {
    writeFileSync(
      join(gateway.cwd, 'config.yaml'),
      `${gatewayYaml}virtual_models:\n  - name: wa-from-file\n    targets: [{ provider: openai, model: mock-model }]\n`,
    );
    await admin('/admin/reload', { body: {} });
    await listingsBecome('/v1/models', (text) => text.includes('"wa-from-file"'));
    await chatsBecome(200, 'wa-from-file');
  });

  it('MCP: a server stored through one worker is listed on both; a reconnect redials it on both', async () => {
    const first: McpFixture = await startMcpFixture({ label: 'wa', tools: ['echo'] });
    let second: McpFixture | undefined;
    try {
      await admin('/admin/mcp-servers', { method: 'PUT', body: { slug: 'wa-tools', url: first.url } });
      const toolsSeen = async (count: number): Promise<boolean> => {
        const views = await onEachConnection(`${gateway.url}/admin/mcp-servers/wa-tools/catalog`, { headers: bearer() });
        return views.every((view) => view.status === 200 && (JSON.parse(view.text) as { tools: unknown[] }).tools.length === count);
      };
      // Each worker connects in the background after the write.
      await eventually(async () => ((await toolsSeen(1)) ? true : undefined), 'one tool listed by both workers', 10_000);
      // The server is replaced by one with another tool, at the same address; a reconnect lists it.
      await first.close();
      second = await startMcpFixture({ label: 'wa', tools: ['echo', 'add'], port: Number(new URL(first.url).port) });
      await admin('/admin/mcp-servers/wa-tools/reconnect', { body: {} });
      await listingsBecome('/admin/mcp-servers', (text) => /"slug":"wa-tools".*?"status":"connected".*?"tool_count":2/.test(text));
      // A virtual server over it is served, then no more, by both.
      const initializeAnswers = (status: number): Promise<RawReply[]> =>
        onBothWorkers(
          () =>
            onEachConnection(`${gateway.url}/mcp/wa-bundle`, {
              headers: { ...bearer(), accept: 'application/json, text/event-stream' },
              body: {
                jsonrpc: '2.0',
                id: 1,
                method: 'initialize',
                params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo },
              },
            }),
          (replies) => replies.every((reply) => reply.status === status),
        );
      await admin('/admin/mcp-virtual-servers', { method: 'PUT', body: { name: 'wa-bundle', servers: ['wa-tools'] } });
      await initializeAnswers(200);
      await admin('/admin/mcp-virtual-servers', { method: 'DELETE', body: { name: 'wa-bundle' } });
      await initializeAnswers(404);
      await admin('/admin/mcp-servers/wa-tools', { method: 'DELETE' });
      await listingsBecome('/admin/mcp-servers', (text) => !text.includes('"wa-tools"'));
    } finally {
      await first.close().catch(() => undefined);
      await second?.close();
    }
  });

  it('/metrics counts the requests of both workers, whichever answers the scrape', async () => {
    expect(statuses(await chats('openai/mock-model'))).toEqual(same(6, 200));
    const served = (text: string): number =>
      text
        .split('\n')
        .filter((line) => line.startsWith('gateway_requests_total{') && line.includes('endpoint="/v1/chat/completions"'))
        .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    const scrapes = (await onEachConnection(`${gateway.url}/metrics`)).map((scrape) => served(scrape.text));
    expect(scrapes[0]).toBeGreaterThanOrEqual(6);
    expect(scrapes).toEqual(same(6, scrapes[0] as number));
  });

  it('usage, the request log and the audit log: both workers list what either recorded', async () => {
    expect(statuses(await chats('openai/mock-model', undefined, { 'x-user-path': '/wa-log' }))).toEqual(same(6, 200));
    // Each worker writes its own batches (every USAGE_FLUSH_INTERVAL_MS, as with one worker): wait for them.
    const counted = async (path: string, count: (body: Record<string, unknown>) => number): Promise<number[]> =>
      (await onEachConnection(`${gateway.url}${path}`, { headers: bearer() })).map((reply) =>
        count(JSON.parse(reply.text) as Record<string, unknown>),
      );
    const usage = (body: Record<string, unknown>): number =>
      (body['rows'] as Array<{ requests: number }>).reduce((total, row) => total + row.requests, 0);
    const logged = (body: Record<string, unknown>): number => (body['requests'] as unknown[]).length;
    await eventually(
      async () => ((await counted('/admin/usage?user_path=/wa-log', usage)).every((n) => n === 6) ? true : undefined),
      'usage',
      5_000,
    );
    await eventually(
      async () => ((await counted('/admin/requests?user_path=/wa-log', logged)).every((n) => n === 6) ? true : undefined),
      'log',
      5_000,
    );
    // An audit entry is written before the write is answered.
    await admin('/admin/budgets', { method: 'PUT', body: { user_path: '/wa-audit', period: 'daily', amount: 1 } });
    for (const reply of await onEachConnection(`${gateway.url}/admin/audit?resource=budgets`, { headers: bearer() })) {
      expect(reply.text).toContain('/wa-audit');
    }
  });
});

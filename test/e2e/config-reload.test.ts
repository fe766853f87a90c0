import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, listModels, parseJson } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatAt, findRule } from '../support/rate-limits.ts';
import { eventually } from '../support/wait.ts';

// Hot reload (issue 21): SIGHUP and POST /admin/reload re-read config.yaml and swap rate-limit
// rules, virtual models and failover rules without failing requests or cutting streams in
// flight; counters of rules kept survive; an invalid file is refused and the old configuration
// stays. Provider and pricing swaps: config-reload-providers.test.ts.

const pricing = `
pricing:
  mock-model: { input_per_mtok: 25000, output_per_mtok: 140000 }
`;

const firstYaml = `${pricing}
budgets:
  user_paths:
    - path: /spend
      limits: [{ period: daily, amount: 100 }]
    - path: /dropped-budget
      limits: [{ period: daily, amount: 1 }]
failover:
  rules:
    - { model: openai/mock-model, fallbacks: [openai/slow-stream], on: [5xx] }
mcp:
  servers:
    old-tools: { url: "http://127.0.0.1:9/mcp" }
rate_limits:
  user_paths:
    - path: /keep
      limits: [{ period: hour, max_requests: 100 }]
    - path: /gone
      limits: [{ period: hour, max_requests: 1 }]
virtual_models:
  - name: alias-a
    targets: [{ provider: openai, model: mock-model }]
  - name: alias-kept
    targets: [{ provider: openai, model: mock-model }]
`;

const secondYaml = `${pricing}
budgets:
  user_paths:
    - path: /spend
      limits: [{ period: daily, amount: 50 }]
    - path: /new-budget
      limits: [{ period: daily, amount: 2 }]
failover:
  rules:
    - { model: openai/slow-stream, fallbacks: [openai/mock-model], on: [5xx] }
mcp:
  servers:
    new-tools: { url: "http://127.0.0.1:9/mcp" }
rate_limits:
  user_paths:
    - path: /keep
      limits: [{ period: hour, max_requests: 50 }]
    - path: /new
      limits: [{ period: hour, max_requests: 1 }]
virtual_models:
  - name: alias-b
    targets: [{ provider: openai, model: mock-model }]
  - name: alias-kept
    targets: [{ provider: openai, model: mock-model }, { provider: openai, model: slow-stream }]
`;

interface ListedBudget {
  user_path: string;
  amount: number;
  spent: number;
  origin: string;
}

async function budgetOf(gateway: GatewayProcess, userPath: string): Promise<ListedBudget | undefined> {
  const reply = await call(gateway, '/admin/budgets');
  expect(reply.status, reply.text).toBe(200);
  return (parseJson(reply.text)['budgets'] as ListedBudget[]).find((budget) => budget.user_path === userPath);
}

describe('configuration hot reload', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  const writeConfig = (yaml: string): void => writeFileSync(join(gateway.cwd, 'config.yaml'), yaml);
  const reload = () => call(gateway, '/admin/reload', { method: 'POST', body: {} });

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,slow-stream' }), configYaml: firstYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('applies added, changed and removed rules and virtual models under load, keeping counters', async () => {
    for (let index = 0; index < 3; index += 1) expect((await chatAt(gateway, '/keep')).status).toBe(200);
    expect((await chatAt(gateway, '/gone')).status).toBe(200);
    expect((await chatAt(gateway, '/gone')).status).toBe(429);
    expect((await chatAt(gateway, '/spend')).status).toBe(200);
    const spentBefore = (await budgetOf(gateway, '/spend'))?.spent ?? 0;
    expect(spentBefore).toBeGreaterThan(0);

    // A stream that spans the reload, and a loop of requests around it.
    const stream = chatAt(gateway, '/load', 'openai/slow-stream', { stream: true });
    let loading = true;
    const statuses: number[] = [];
    const loop = (async () => {
      for (let turn = 0; loading; turn += 1) {
        statuses.push((await chatAt(gateway, '/load', turn % 2 === 0 ? 'alias-kept' : 'openai/mock-model')).status);
      }
    })();
    const answered = (count: number) => eventually(async () => (statuses.length >= count ? true : undefined), `${count} answers`, 30_000);
    await answered(3);
    writeConfig(secondYaml);
    const reply = await reload();
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)).toEqual({
      applied: [
        'providers',
        'pricing',
        'rate_limits.rules',
        'budgets.rules',
        'virtual_models',
        'failover.rules',
        'mcp.servers',
        'mcp.virtual_servers',
        'guardrails',
      ],
      restart_needed: [],
    });
    await answered(statuses.length + 3);
    loading = false;
    await loop;
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('[DONE]');
    // No request failed, before, during or after the swap.
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    const kept = await findRule(gateway, 'user_path', '/keep', 'hour');
    expect(kept).toMatchObject({ max_requests: 50, requests_used: 3, origin: 'config' });
    expect(await findRule(gateway, 'user_path', '/gone', 'hour')).toBeUndefined();
    expect(await findRule(gateway, 'user_path', '/new', 'hour')).toMatchObject({ max_requests: 1, requests_used: 0 });
    expect((await chatAt(gateway, '/gone')).status).toBe(200);
    expect((await chatAt(gateway, '/new')).status).toBe(200);
    expect((await chatAt(gateway, '/new')).status).toBe(429);

    expect(await budgetOf(gateway, '/spend')).toMatchObject({ amount: 50, spent: spentBefore, origin: 'config' });
    expect(await budgetOf(gateway, '/dropped-budget')).toBeUndefined();
    expect(await budgetOf(gateway, '/new-budget')).toMatchObject({ amount: 2, spent: 0 });

    const failover = await call(gateway, '/admin/failover-rules');
    expect((JSON.parse(failover.text) as Array<{ model: string }>).map((rule) => rule.model)).toEqual(['openai/slow-stream']);

    const mcpServers = await call(gateway, '/admin/mcp-servers');
    expect((JSON.parse(mcpServers.text) as Array<{ slug: string }>).map((server) => server.slug)).toEqual(['new-tools']);

    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toContain('alias-b');
    expect(ids).not.toContain('alias-a');
    expect((await chatAt(gateway, '/other', 'alias-b')).status).toBe(200);
    expectEnvelope(await chatAt(gateway, '/other', 'alias-a'), { status: 404, type: 'not_found_error', code: 'model_not_found' });
  });

  it('refuses an invalid file with the key named, logs why, and keeps the old configuration', async () => {
    writeConfig(`${secondYaml}\nrate_limits_typo: 1\nrequest_log:\n  bodies: sometimes\n`);
    const refused = await reload();
    const error = expectEnvelope(refused, { status: 400, type: 'invalid_request_error', code: 'invalid_config' });
    expect(error.param).toBe('request_log.bodies');
    expect(gateway.logs().some((line) => String(line['msg']).startsWith('configuration reload refused'))).toBe(true);
    expect(await findRule(gateway, 'user_path', '/keep', 'hour')).toMatchObject({ max_requests: 50, requests_used: 3 });
    expect((await listModels(gateway)).map((model) => model.id)).toContain('alias-b');
  });

  it('refuses an invalid provider with the key named, keeping the old providers', async () => {
    writeConfig(`${secondYaml}\nproviders:\n  extra:\n    type: no-such-type\n    base_url: ${mock.url}\n`);
    const error = expectEnvelope(await reload(), { status: 400, type: 'invalid_request_error', code: 'invalid_config' });
    expect(error.param).toMatch(/^providers\.extra/);
    expect(await findRule(gateway, 'user_path', '/new', 'hour')).toBeDefined();
    expect((await chatAt(gateway, '/other', 'openai/mock-model')).status).toBe(200);
  });

  it('lists a section needing a restart on every reload until the process restarts or the change is undone', async () => {
    const restartNeeded = async (): Promise<unknown> => (JSON.parse((await reload()).text) as Record<string, unknown>)['restart_needed'];
    writeConfig(`${secondYaml}\nusage:\n  batch_size: 7\n`);
    expect(await restartNeeded()).toEqual(['usage']);
    // The next reload of the same file: the process still runs on the old batch size, so still pending.
    expect(await restartNeeded()).toEqual(['usage']);
    writeConfig(secondYaml);
    expect(await restartNeeded()).toEqual([]);
  });

  it('reloads on SIGHUP', async () => {
    writeConfig(`${secondYaml.replace(/path: \/new$/m, 'path: /hup')}`);
    gateway.child.kill('SIGHUP');
    await eventually(() => findRule(gateway, 'user_path', '/hup', 'hour'), 'the /hup rule after SIGHUP', 20_000);
    expect(await findRule(gateway, 'user_path', '/new', 'hour')).toBeUndefined();
    expect((await call(gateway, '/health')).status).toBe(200);
  });
});

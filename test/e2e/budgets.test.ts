import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { secondsToUtcMidnight } from '../support/admin.ts';
import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, chatBody, type RawReply } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { chatRequests } from '../support/upstream.ts';
import { eventually } from '../support/wait.ts';

// CONTRACT section 7: dollar budgets per user path and period, from configuration and the admin
// API, enforced before the upstream call. Every mock-model answer costs exactly $1 here.

const gatewayYaml = `
pricing:
  mock-model: { input_per_mtok: 25000, output_per_mtok: 140000 }
budgets:
  user_paths:
    - path: /cfg
      limits:
        - { period: daily, amount: 100 }
        - { period: monthly, amount: 1000 }
    - path: /yamlcap
      limits: [{ period: daily, amount: 1 }]
`;
const budgetEnv = { OPENAI_MODELS: 'mock-model,free-model', SET_BUDGET_TEAM__ALPHA: 'daily=50,weekly=200', SET_BUDGET_ENVCAP: 'daily=1' };
const budgetKeys = ['amount', 'origin', 'period', 'period_end', 'period_seconds', 'period_start', 'remaining', 'spent', 'user_path'];

interface Budget {
  user_path: string;
  period: string;
  period_seconds: number;
  amount: number;
  spent: number;
  remaining: number;
  period_start: string;
  period_end: string;
  origin: string;
}

const utcMidnight = (offsetDays: number): string => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + offsetDays)).toISOString();
};

function budgetsOf(body: Record<string, unknown>): Budget[] {
  expect(Object.keys(body)).toEqual(['budgets']);
  const budgets = body['budgets'] as Budget[];
  for (const budget of budgets) expect(Object.keys(budget).sort()).toEqual(budgetKeys);
  return budgets;
}

async function listBudgets(gateway: GatewayProcess): Promise<Budget[]> {
  return budgetsOf(await callJson(gateway, '/admin/budgets', 200));
}

async function findBudget(gateway: GatewayProcess, userPath: string, period: string): Promise<Budget | undefined> {
  return (await listBudgets(gateway)).find((budget) => budget.user_path === userPath && budget.period === period);
}

async function putBudget(gateway: GatewayProcess, body: Record<string, unknown>): Promise<Budget[]> {
  const reply = await call(gateway, '/admin/budgets', { method: 'PUT', body });
  expect([200, 201], reply.text).toContain(reply.status);
  return budgetsOf(JSON.parse(reply.text) as Record<string, unknown>);
}

const chatAt = (gateway: GatewayProcess, userPath: string, model = 'mock-model', extra: Record<string, unknown> = {}): Promise<RawReply> =>
  call(gateway, '/v1/chat/completions', { headers: { 'x-user-path': userPath }, body: chatBody(model, extra) });

/** Asserts the exact budget rejection of CONTRACT sections 4 and 7; returns Retry-After in seconds. */
function expectBudgetExceeded(reply: RawReply): number {
  expectEnvelope(reply, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget', param: null });
  const retryAfter = Number(reply.headers['retry-after']);
  expect(Number.isInteger(retryAfter), `Retry-After: ${String(reply.headers['retry-after'])}`).toBe(true);
  return retryAfter;
}

describe('budgets', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, budgetEnv), configYaml: gatewayYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('lists YAML and SET_BUDGET_ rules with origin config and their current periods', async () => {
    const budgets = await listBudgets(gateway);
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    const daily = { period: 'daily', period_seconds: 86_400, spent: 0, period_start: utcMidnight(0), period_end: utcMidnight(1) };
    expect(budgets).toEqual(
      expect.arrayContaining([
        { user_path: '/cfg', ...daily, amount: 100, remaining: 100, origin: 'config' },
        {
          user_path: '/cfg',
          period: 'monthly',
          period_seconds: 2_592_000,
          amount: 1000,
          spent: 0,
          remaining: 1000,
          period_start: monthStart,
          period_end: nextMonth,
          origin: 'config',
        },
        { user_path: '/team/alpha', ...daily, amount: 50, remaining: 50, origin: 'config' },
        { user_path: '/envcap', ...daily, amount: 1, remaining: 1, origin: 'config' },
      ]),
    );
    const weekly = budgets.find((budget) => budget.user_path === '/team/alpha' && budget.period === 'weekly');
    expect(weekly).toMatchObject({ period_seconds: 604_800, amount: 200, origin: 'config' });
    const weekStart = new Date(weekly?.period_start ?? '');
    expect(weekStart.getUTCDay()).toBe(1); // Monday
    expect(Date.parse(weekly?.period_end ?? '') - weekStart.getTime()).toBe(7 * 86_400_000);
  });

  it('refuses PUT and DELETE on configuration rules with 409', async () => {
    for (const [method, body] of [
      ['PUT', { user_path: '/cfg', period: 'daily', amount: 5 }],
      ['PUT', { user_path: '/Team/Alpha', period: 'weekly', amount: 5 }],
      ['DELETE', { user_path: '/team/alpha', period: 'daily' }],
      ['DELETE', { user_path: '/cfg', period: 'monthly' }],
    ] as const) {
      expectEnvelope(await call(gateway, '/admin/budgets', { method, body }), { status: 409, type: 'invalid_request_error' });
    }
    expect(await findBudget(gateway, '/cfg', 'daily')).toMatchObject({ amount: 100, origin: 'config' });
    expect(await findBudget(gateway, '/team/alpha', 'daily')).toMatchObject({ amount: 50, origin: 'config' });
  });

  it('creates, lists and deletes manual rules (named and custom periods)', async () => {
    const created = await putBudget(gateway, { user_path: 'shape/', period: 'daily', amount: 5 });
    const expected = {
      user_path: '/shape',
      period: 'daily',
      period_seconds: 86_400,
      amount: 5,
      spent: 0,
      remaining: 5,
      period_start: utcMidnight(0),
      period_end: utcMidnight(1),
      origin: 'manual',
    };
    expect(created).toContainEqual(expected);
    expect(await listBudgets(gateway)).toContainEqual(expected);
    const custom = (await putBudget(gateway, { user_path: '/shape', period_seconds: 600, amount: 2 })).find(
      (budget) => budget.user_path === '/shape' && budget.period_seconds === 600,
    );
    expect(custom).toMatchObject({ period: 'custom', amount: 2, origin: 'manual' });
    expect(Date.parse(custom?.period_end ?? '') - Date.parse(custom?.period_start ?? '')).toBe(600_000);

    const afterDelete = budgetsOf(
      await callJson(gateway, '/admin/budgets', 200, { method: 'DELETE', body: { user_path: '/shape', period: 'daily' } }),
    );
    expect(afterDelete.filter((budget) => budget.user_path === '/shape').map((budget) => budget.period)).toEqual(['custom']);
    const again = await call(gateway, '/admin/budgets', { method: 'DELETE', body: { user_path: '/shape', period: 'daily' } });
    expectEnvelope(again, { status: 404, type: 'not_found_error' });
    await callJson(gateway, '/admin/budgets', 200, { method: 'DELETE', body: { user_path: '/shape', period_seconds: 600 } });
    expect((await listBudgets(gateway)).filter((budget) => budget.user_path === '/shape')).toEqual([]);
    const unknown = await call(gateway, '/admin/budgets', { method: 'DELETE', body: { user_path: '/never', period: 'hourly' } });
    expectEnvelope(unknown, { status: 404, type: 'not_found_error' });
  });

  it.each([
    ['PUT', 'amount 0', { user_path: '/v', period: 'daily', amount: 0 }],
    ['PUT', 'a negative amount', { user_path: '/v', period: 'daily', amount: -1 }],
    ['PUT', 'a string amount', { user_path: '/v', period: 'daily', amount: '5' }],
    ['PUT', 'no amount', { user_path: '/v', period: 'daily' }],
    ['PUT', 'an unknown period', { user_path: '/v', period: 'yearly', amount: 5 }],
    ['PUT', 'no period', { user_path: '/v', amount: 5 }],
    ['PUT', 'period_seconds below 60', { user_path: '/v', period_seconds: 30, amount: 5 }],
    ['PUT', 'a missing user_path', { period: 'daily', amount: 5 }],
    ['PUT', 'a non-string user_path', { user_path: 7, period: 'daily', amount: 5 }],
    ['PUT', 'a user_path with ..', { user_path: '/a/../b', period: 'daily', amount: 5 }],
    ['PUT', 'an array body', [{ user_path: '/v', period: 'daily', amount: 5 }]],
    ['DELETE', 'a missing user_path', { period: 'daily' }],
    ['DELETE', 'an unknown period', { user_path: '/v', period: 'yearly' }],
  ] as const)('%s with %s -> 400', async (method, _label, body) => {
    expectEnvelope(await call(gateway, '/admin/budgets', { method, body }), { status: 400, type: 'invalid_request_error' });
    expect((await listBudgets(gateway)).filter((budget) => budget.user_path === '/v')).toEqual([]);
  });

  it('rejects a request over budget with 429 budget_exceeded before calling the upstream', async () => {
    await putBudget(gateway, { user_path: '/exceed', period: 'daily', amount: 1 });
    expect((await chatAt(gateway, '/exceed')).status).toBe(200);
    expect(await findBudget(gateway, '/exceed', 'daily')).toMatchObject({ spent: 1, remaining: 0 });
    const upstreamCalls = chatRequests(mock).length;
    const rejected = await chatAt(gateway, '/exceed');
    const retryAfter = expectBudgetExceeded(rejected);
    expect(Math.abs(retryAfter - secondsToUtcMidnight())).toBeLessThanOrEqual(2);
    expectBudgetExceeded(await chatAt(gateway, '/EXCEED/below', 'free-model'));
    expectBudgetExceeded(await chatAt(gateway, '/exceed', 'mock-model', { stream: true }));
    const thrown = await rejectionOf(
      openAIClient(gateway).chat.completions.create(
        { model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'X-User-Path': '/exceed' } },
      ),
    );
    expect(thrown).toBeInstanceOf(OpenAI.RateLimitError);
    expectClientError(thrown, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget' });
    expect(chatRequests(mock).length).toBe(upstreamCalls);
  });

  it('enforces configuration rules from YAML and from SET_BUDGET_', async () => {
    for (const userPath of ['/yamlcap', '/envcap']) {
      expect((await chatAt(gateway, userPath)).status).toBe(200);
      expectBudgetExceeded(await chatAt(gateway, userPath));
      expect(await findBudget(gateway, userPath, 'daily')).toMatchObject({ spent: 1, remaining: 0, origin: 'config' });
    }
  });

  it('applies a /team budget to /team and below, not to /team-alpha', async () => {
    await putBudget(gateway, { user_path: '/team', period: 'daily', amount: 1 });
    expect((await chatAt(gateway, '/team/app')).status).toBe(200);
    for (const userPath of ['/team/app', '/team', '/Team/App/deep']) expectBudgetExceeded(await chatAt(gateway, userPath, 'free-model'));
    for (let index = 0; index < 2; index += 1) expect((await chatAt(gateway, '/team-alpha')).status).toBe(200);
    expect(await findBudget(gateway, '/team', 'daily')).toMatchObject({ spent: 1 });
  });

  it('counts a streamed response against the budget within 2 s of its end', async () => {
    await putBudget(gateway, { user_path: '/streamed', period: 'daily', amount: 1 });
    const stream = await openAIClient(gateway).chat.completions.create(
      { model: 'mock-model', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { headers: { 'X-User-Path': '/streamed' } },
    );
    for await (const chunk of stream) expect(chunk.object).toBe('chat.completion.chunk');
    const ended = Date.now();
    // Probe with an unpriced model: it adds no spend, but the budget check still applies.
    let probe = await chatAt(gateway, '/streamed', 'free-model');
    while (probe.status === 200 && Date.now() - ended < 2_000) probe = await chatAt(gateway, '/streamed', 'free-model');
    expectBudgetExceeded(probe);
    expect(await findBudget(gateway, '/streamed', 'daily')).toMatchObject({ spent: 1 });
  });

  it('re-admits requests when the amount is raised, keeping the spend', async () => {
    await putBudget(gateway, { user_path: '/raise', period: 'daily', amount: 1 });
    expect((await chatAt(gateway, '/raise')).status).toBe(200);
    expectBudgetExceeded(await chatAt(gateway, '/raise'));
    const raised = (await putBudget(gateway, { user_path: '/raise', period: 'daily', amount: 2.5 })).find(
      (budget) => budget.user_path === '/raise',
    );
    expect(raised).toMatchObject({ amount: 2.5, spent: 1, remaining: 1.5, origin: 'manual' });
    expect((await chatAt(gateway, '/raise')).status).toBe(200);
    expect((await chatAt(gateway, '/raise')).status).toBe(200);
    expectBudgetExceeded(await chatAt(gateway, '/raise'));
    expect(await findBudget(gateway, '/raise', 'daily')).toMatchObject({ spent: 3, remaining: 0 });
  });

  it('shows the budgets that apply to the caller in GET /v1/usage', async () => {
    await putBudget(gateway, { user_path: '/apply', period: 'daily', amount: 10 });
    await putBudget(gateway, { user_path: '/apply/x', period: 'hourly', amount: 5 });
    await putBudget(gateway, { user_path: '/applyother', period: 'daily', amount: 5 });
    expect((await chatAt(gateway, '/apply/x/y')).status).toBe(200);
    // The budgets see the spend at once; the usage totals once the batch writer has stored the record.
    const body = await eventually(async () => {
      const usage = await callJson(gateway, '/v1/usage', 200, { headers: { 'x-user-path': '/apply/x/y' } });
      return (usage['usage'] as { requests?: number } | null)?.requests === 0 ? undefined : usage;
    }, 'the request in GET /v1/usage');
    expect(body['user_path']).toBe('/apply/x/y');
    expect(body['usage']).toEqual({
      requests: 1,
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      cost_usd: 1,
      unpriced_requests: 0,
    });
    expect(body['rate_limits']).toEqual([]);
    const budgets = (body['budgets'] as Budget[]).map((budget) => `${budget.user_path} ${budget.period} ${budget.spent}`);
    expect(budgets.sort()).toEqual(['/apply daily 1', '/apply/x hourly 1']);
    for (const budget of body['budgets'] as Budget[]) expect(Object.keys(budget).sort()).toEqual(budgetKeys);
  });
});

describe.each(backendNames)('budget spend on %s', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  // Spend is re-read every second (PostgreSQL is shared with other replicas); usage records are
  // written every second, so a record is reliably still queued right after its response.
  const spendEnv = (): Record<string, string> =>
    gatewayEnv(mock, { ...budgetEnv, ...database.env, BUDGETS_REFRESH_INTERVAL_SECONDS: '1', USAGE_FLUSH_INTERVAL_MS: '1000' });

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backendName);
    gateway = await startGateway({ env: spendEnv(), configYaml: gatewayYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await database?.dispose();
    await mock?.close();
  });

  it('keeps manual rules and reads the period spend back from usage records', async () => {
    await putBudget(gateway, { user_path: '/persist', period: 'daily', amount: 2 });
    for (let index = 0; index < 2; index += 1) expect((await chatAt(gateway, '/persist/app')).status).toBe(200);
    expectBudgetExceeded(await chatAt(gateway, '/persist/app'));
    expect(await gateway.stop()).toBe(0);
    gateway = await startGateway({ env: spendEnv(), configYaml: gatewayYaml, cwd: gateway.cwd });
    expect(await findBudget(gateway, '/persist', 'daily')).toMatchObject({ amount: 2, spent: 2, remaining: 0, origin: 'manual' });
    const upstreamCalls = chatRequests(mock).length;
    expectBudgetExceeded(await chatAt(gateway, '/persist/app'));
    expect(chatRequests(mock).length).toBe(upstreamCalls);
  });

  it('counts the spend of a request made just before its rule was created', async () => {
    expect((await chatAt(gateway, '/late/app')).status).toBe(200);
    await putBudget(gateway, { user_path: '/late', period: 'daily', amount: 1 });
    // The period's usage so far counts, whether or not its record was written when the rule appeared.
    const budget = await eventually(
      async () => {
        const found = await findBudget(gateway, '/late', 'daily');
        return found?.spent === 1 ? found : undefined;
      },
      'the /late budget to show the $1 spent before it existed',
      4_000,
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; GET /admin/budgets has ${JSON.stringify(await findBudget(gateway, '/late', 'daily'))}`);
    });
    expect(budget).toMatchObject({ remaining: 0 });
    expectBudgetExceeded(await chatAt(gateway, '/late/app', 'free-model'));
  });

  it('ends with exactly the spend of the requests made under concurrent load', async () => {
    await putBudget(gateway, { user_path: '/load', period: 'daily', amount: 1_000_000 });
    let completed = 0;
    const deadline = Date.now() + 1_500; // spans at least one refresh of the spend
    const worker = async (): Promise<void> => {
      while (Date.now() < deadline) {
        expect((await chatAt(gateway, '/load')).status).toBe(200);
        completed += 1;
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    // Each request costs $1 and is charged exactly once, before and after its record is written.
    await eventually(
      async () => ((await findBudget(gateway, '/load', 'daily'))?.spent === completed ? true : undefined),
      `spent = ${completed}`,
    );
  });
});

describe('BUDGETS_ENABLED=false', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({
      env: gatewayEnv(mock, { ...budgetEnv, BUDGETS_ENABLED: 'false', SET_BUDGET_: 'daily=0.5' }),
      configYaml: gatewayYaml,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('answers /admin/budgets with 503 feature_unavailable and enforces nothing', async () => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const body = method === 'GET' ? undefined : { user_path: '/x', period: 'daily', amount: 1 };
      const reply = await call(gateway, '/admin/budgets', { method, body });
      expectEnvelope(reply, { status: 503, type: 'invalid_request_error', code: 'feature_unavailable' });
    }
    for (const userPath of ['/', '/yamlcap', '/yamlcap', '/envcap', '/envcap']) expect((await chatAt(gateway, userPath)).status).toBe(200);
    const usage = await callJson(gateway, '/v1/usage', 200, { headers: { 'x-user-path': '/yamlcap' } });
    expect(usage['budgets']).toEqual([]);
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, listModels, parseJson } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatAt, findRule } from '../support/rate-limits.ts';
import { eventually } from '../support/wait.ts';

// Hot reload of providers and pricing (issue 21): an instance is added, changed (new key) and
// removed under load. Requests to other instances never fail, a stream on the changed or
// removed instance finishes on the adapter it started with, the provider rule on the instance
// keeps its counters while the rule itself is unchanged, and new prices apply to the next call.

interface ProviderYaml {
  extraUrl?: string;
  extraKey?: string;
  price: number;
}

function configYaml({ extraUrl, extraKey, price }: ProviderYaml): string {
  const extra =
    extraUrl === undefined
      ? ''
      : `providers:\n  extra:\n    type: openai\n    base_url: ${extraUrl}\n    api_key: ${extraKey}\n    models: [mock-model, slow-stream]\n`;
  return `
pricing:
  mock-model: { input_per_mtok: ${price}, output_per_mtok: 0 }
budgets:
  user_paths:
    - path: /priced
      limits: [{ period: daily, amount: 1000000 }]
rate_limits:
  providers:
    - name: extra
      limits: [{ period: hour, max_requests: 1000 }]
${extra}`;
}

interface ModelRow {
  id: string;
  pricing: { input_per_mtok: number } | null;
}

async function spentOn(gateway: GatewayProcess, userPath: string): Promise<number> {
  const reply = await call(gateway, '/admin/budgets');
  const budgets = parseJson(reply.text)['budgets'] as Array<{ user_path: string; spent: number }>;
  return budgets.find((budget) => budget.user_path === userPath)?.spent ?? Number.NaN;
}

describe('hot reload of providers and pricing', () => {
  let mock: MockUpstream;
  let extra: MockUpstream;
  let gateway: GatewayProcess;
  const statuses: number[] = [];
  let loading = true;
  let loop: Promise<void> = Promise.resolve();

  const reload = async (yaml: ProviderYaml): Promise<Record<string, unknown>> => {
    writeFileSync(join(gateway.cwd, 'config.yaml'), configYaml(yaml));
    const reply = await call(gateway, '/admin/reload', { method: 'POST', body: {} });
    expect(reply.status, reply.text).toBe(200);
    return parseJson(reply.text);
  };
  const answered = (count: number) => eventually(async () => (statuses.length >= count ? true : undefined), `${count} answers`, 30_000);
  const lastAuthorization = () => extra.requests.at(-1)?.headers.authorization;
  const slowStreamStarted = (count: number) =>
    extra.waitFor(
      (requests) =>
        requests.filter((request) => (request.body as { model?: unknown } | undefined)?.model === 'slow-stream').length >= count,
    );

  beforeAll(async () => {
    mock = await startMockUpstream();
    extra = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model' }), configYaml: configYaml({ price: 1_000_000 }) });
    loop = (async () => {
      while (loading) statuses.push((await chatAt(gateway, '/load')).status);
    })();
  });

  afterAll(async () => {
    loading = false;
    await loop;
    await gateway?.stop();
    await mock?.close();
    await extra?.close();
  });

  it('adds a provider and applies new prices to the next call', async () => {
    await chatAt(gateway, '/priced');
    const cheap = await spentOn(gateway, '/priced');
    expect(cheap).toBeGreaterThan(0);
    await answered(3);
    const outcome = await reload({ extraUrl: extra.url, extraKey: 'sk-one', price: 3_000_000 });
    expect(outcome['applied']).toEqual(expect.arrayContaining(['providers', 'pricing']));
    expect(outcome['restart_needed']).toEqual([]);

    expect((await chatAt(gateway, '/other', 'extra/mock-model')).status).toBe(200);
    expect(lastAuthorization()).toBe('Bearer sk-one');
    expect((await listModels(gateway)).map((model) => model.id)).toContain('extra/mock-model');
    const rows = parseJson(`{"rows":${(await call(gateway, '/admin/models')).text}}`)['rows'] as ModelRow[];
    expect(rows.find((row) => row.id === 'openai/mock-model')?.pricing?.input_per_mtok).toBe(3_000_000);

    await chatAt(gateway, '/priced');
    const delta = (await spentOn(gateway, '/priced')) - cheap;
    expect(delta / cheap).toBeCloseTo(3, 6);
  });

  it('changes a provider while a stream runs on it: the stream finishes, the rule keeps its counters', async () => {
    const usedBefore = (await findRule(gateway, 'provider', 'extra', 'hour'))?.requests_used ?? 0;
    expect(usedBefore).toBeGreaterThanOrEqual(1);
    const stream = chatAt(gateway, '/other', 'extra/slow-stream', { stream: true });
    await slowStreamStarted(1);
    await reload({ extraUrl: extra.url, extraKey: 'sk-two', price: 3_000_000 });
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('[DONE]');
    expect(lastAuthorization()).toBe('Bearer sk-one');

    expect((await chatAt(gateway, '/other', 'extra/mock-model')).status).toBe(200);
    expect(lastAuthorization()).toBe('Bearer sk-two');
    // The rule on `extra` is unchanged: its window keeps counting (SEED-SPEC "States and transitions").
    expect(await findRule(gateway, 'provider', 'extra', 'hour')).toMatchObject({ requests_used: usedBefore + 2 });
  });

  it('removes a provider while a stream runs on it, with no failed request elsewhere', async () => {
    const stream = chatAt(gateway, '/other', 'extra/slow-stream', { stream: true });
    await slowStreamStarted(2);
    const before = statuses.length;
    await reload({ price: 3_000_000 });
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('[DONE]');

    const gone = await chatAt(gateway, '/other', 'extra/mock-model');
    expect(gone.status, gone.text).toBeGreaterThanOrEqual(400);
    expect(gone.status).toBeLessThan(500);
    expect((await listModels(gateway)).map((model) => model.id)).not.toContain('extra/mock-model');

    await answered(before + 3);
    loading = false;
    await loop;
    expect(statuses.length).toBeGreaterThan(6);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(gateway.logs().some((line) => line['msg'] === 'upstream pools of removed providers closed')).toBe(true);
  });
});

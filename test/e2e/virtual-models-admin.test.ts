import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, type Call, listModels, parseJson } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { chat, chatCount, closeAll, instancesEnv, servedBy, startMocks } from '../support/virtual-models.ts';

// CONTRACT section 8: GET|PUT|DELETE /admin/virtual-models (config-declared aliases read-only,
// admin ones stored and served at once, kept across restarts) and the rows of GET /admin/models.

interface ListedVirtualModel {
  name: string;
  description: string;
  strategy: string;
  targets: Array<{ provider: string | null; model: string; weight: number }>;
  origin: string;
  created_at: string;
  updated_at: string;
}

const viewKeys = ['created_at', 'description', 'name', 'origin', 'strategy', 'targets', 'updated_at'];
const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const configYaml = `
virtual_models:
  - name: from-config
    description: declared in YAML
    strategy: round_robin
    targets:
      - { provider: openai, model: mock-model, weight: 3 }
      - { provider: openai-b, model: mock-model }
`;
const envModels = JSON.stringify([
  { name: 'from-env', strategy: 'failover', targets: [{ provider: 'openai-b', model: 'mock-model' }, { model: 'mock-model' }] },
]);

function expectView(model: ListedVirtualModel | undefined): ListedVirtualModel {
  expect(model).toBeDefined();
  const view = model as ListedVirtualModel;
  expect(Object.keys(view).sort()).toEqual(viewKeys);
  expect(view.created_at).toMatch(isoPattern);
  expect(view.updated_at).toMatch(isoPattern);
  for (const target of view.targets) expect(Object.keys(target).sort()).toEqual(['model', 'provider', 'weight']);
  return view;
}

describe('admin API of virtual models', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let env: Record<string, string>;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(2);
    [a, b] = mocks as [MockUpstream, MockUpstream];
    env = instancesEnv(mocks, ['mock-model', 'mock-model-2'], { VIRTUAL_MODELS: envModels });
    gateway = await startGateway({ env, configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  async function admin(options: Call = {}): Promise<ReturnType<typeof call>> {
    return call(gateway, '/admin/virtual-models', options);
  }

  async function list(): Promise<ListedVirtualModel[]> {
    const reply = await admin();
    expect(reply.status, reply.text).toBe(200);
    const body: unknown = JSON.parse(reply.text);
    expect(Array.isArray(body)).toBe(true);
    return body as ListedVirtualModel[];
  }

  async function put(body: Record<string, unknown>): Promise<ListedVirtualModel> {
    const reply = await admin({ method: 'PUT', body });
    expect(reply.status, reply.text).toBe(200);
    return expectView(parseJson(reply.text) as unknown as ListedVirtualModel);
  }

  it('GET lists config and environment declarations, read-only, with their targets', async () => {
    const models = await list();
    const fromConfig = expectView(models.find((model) => model.name === 'from-config'));
    expect(fromConfig).toMatchObject({ description: 'declared in YAML', strategy: 'round_robin', origin: 'config' });
    expect(fromConfig.targets).toEqual([
      { provider: 'openai', model: 'mock-model', weight: 3 },
      { provider: 'openai-b', model: 'mock-model', weight: 1 },
    ]);
    const fromEnv = expectView(models.find((model) => model.name === 'from-env'));
    expect(fromEnv).toMatchObject({ strategy: 'failover', origin: 'config', description: '' });
    expect(fromEnv.targets[0]).toEqual({ provider: 'openai-b', model: 'mock-model', weight: 1 });
    expect(fromEnv.targets[1]?.model).toBe('mock-model');
    // The environment declaration is served: failover starts with openai-b.
    expect(await servedBy(gateway, 'from-env')).toBe('openai-b');
  });

  it('the admin routes need the master key', async () => {
    expectEnvelope(await admin({ token: null }), { status: 401, type: 'authentication_error' });
    expectEnvelope(await admin({ token: 'wrong-key' }), { status: 401, type: 'authentication_error' });
  });

  it('PUT creates an alias that is listed and served at once', async () => {
    const view = await put({
      name: 'managed',
      description: 'made by the API',
      strategy: 'failover',
      targets: [
        { provider: 'openai-b', model: 'mock-model-2' },
        { provider: 'openai', model: 'mock-model-2', weight: 2 },
      ],
    });
    expect(view).toMatchObject({ name: 'managed', description: 'made by the API', strategy: 'failover', origin: 'manual' });
    expect(view.targets).toEqual([
      { provider: 'openai-b', model: 'mock-model-2', weight: 1 },
      { provider: 'openai', model: 'mock-model-2', weight: 2 },
    ]);
    expect((await list()).map((model) => model.name)).toContain('managed');
    expect((await listModels(gateway)).map((model) => model.id)).toContain('managed');
    expect(await servedBy(gateway, 'managed')).toBe('openai-b');
    expect(chatCount(b, 'mock-model-2')).toBe(1);
    expect(chatCount(a, 'mock-model-2')).toBe(0);
  });

  it('PUT on an existing name updates it in place, keeping created_at', async () => {
    const before = (await list()).find((model) => model.name === 'managed');
    const view = await put({ name: 'managed', strategy: 'failover', targets: [{ provider: 'openai', model: 'mock-model-2' }] });
    expect(view.created_at).toBe(before?.created_at);
    expect(Date.parse(view.updated_at)).toBeGreaterThanOrEqual(Date.parse(before?.updated_at ?? ''));
    expect(view.description).toBe('');
    expect(await servedBy(gateway, 'managed')).toBe('openai');
    expect((await list()).filter((model) => model.name === 'managed')).toHaveLength(1);
  });

  it.each([
    ['a bad strategy', { strategy: 'random' }, 'strategy'],
    ['an empty target list', { targets: [] }, 'targets'],
    ['no targets at all', { targets: undefined }, 'targets'],
    ['a weight of 0', { targets: [{ provider: 'openai', model: 'mock-model', weight: 0 }] }, 'targets.0.weight'],
    ['an unknown provider', { targets: [{ provider: 'nowhere', model: 'mock-model' }] }, 'targets.0.provider'],
    ['no name', { name: '' }, 'name'],
    ['an unknown field', { colour: 'red' }, 'colour'],
    ['a target without a model', { targets: [{ provider: 'openai' }] }, 'targets.0.model'],
  ])('PUT with %s answers 400 naming the field', async (_what, override, field) => {
    const body = { name: 'invalid-alias', strategy: 'round_robin', targets: [{ provider: 'openai', model: 'mock-model' }], ...override };
    const error = expectEnvelope(await admin({ method: 'PUT', body }), { status: 400, type: 'invalid_request_error', param: field });
    expect(error.message.length).toBeGreaterThan(0);
    expect((await list()).map((model) => model.name)).not.toContain('invalid-alias');
  });

  it('config-declared aliases cannot be changed or deleted (409 virtual_model_read_only)', async () => {
    const targets = [{ provider: 'openai', model: 'mock-model' }];
    for (const name of ['from-config', 'from-env']) {
      const update = await admin({ method: 'PUT', body: { name, strategy: 'failover', targets } });
      expectEnvelope(update, { status: 409, type: 'invalid_request_error', code: 'virtual_model_read_only' });
      const removal = await admin({ method: 'DELETE', body: { name } });
      expectEnvelope(removal, { status: 409, type: 'invalid_request_error', code: 'virtual_model_read_only' });
    }
    expect(expectView((await list()).find((model) => model.name === 'from-config')).strategy).toBe('round_robin');
  });

  it('DELETE of an unknown alias answers 404 virtual_model_not_found; without a name 400', async () => {
    const reply = await admin({ method: 'DELETE', body: { name: 'never-declared' } });
    expectEnvelope(reply, { status: 404, type: 'not_found_error', code: 'virtual_model_not_found' });
    expectEnvelope(await admin({ method: 'DELETE', body: {} }), { status: 400, type: 'invalid_request_error', param: 'name' });
  });

  it('DELETE removes an admin alias: no longer listed nor served', async () => {
    await put({ name: 'short-lived', targets: [{ provider: 'openai', model: 'mock-model' }] });
    expect(await servedBy(gateway, 'short-lived')).toBe('openai');
    const reply = await admin({ method: 'DELETE', body: { name: 'short-lived' } });
    expect(reply.status, reply.text).toBe(200);
    expect((await list()).map((model) => model.name)).not.toContain('short-lived');
    expect((await listModels(gateway)).map((model) => model.id)).not.toContain('short-lived');
    expectEnvelope(await chat(gateway, 'short-lived'), { status: 404, type: 'not_found_error', code: 'model_not_found' });
  });

  it('GET /admin/models lists concrete rows per instance and virtual rows with their targets', async () => {
    const reply = await call(gateway, '/admin/models');
    expect(reply.status, reply.text).toBe(200);
    const rows = JSON.parse(reply.text) as Array<Record<string, unknown>>;
    const concrete = rows.filter((row) => row['kind'] === 'concrete');
    expect(concrete.map((row) => `${String(row['instance'])}/${String(row['model'])}`).sort()).toEqual([
      'openai-b/mock-model',
      'openai-b/mock-model-2',
      'openai/mock-model',
      'openai/mock-model-2',
    ]);
    for (const row of concrete) expect(row['available']).toBe(true);
    const virtual = rows.filter((row) => row['kind'] === 'virtual');
    expect(virtual.map((row) => row['id']).sort()).toEqual(['from-config', 'from-env', 'managed']);
    const fromConfig = virtual.find((row) => row['id'] === 'from-config');
    expect(fromConfig).toMatchObject({ strategy: 'round_robin', origin: 'config', available: true });
    expect(fromConfig?.['targets']).toEqual([
      expect.objectContaining({ provider: 'openai', model: 'mock-model', weight: 3, available: true }),
      expect.objectContaining({ provider: 'openai-b', model: 'mock-model', weight: 1, available: true }),
    ]);
  });

  it('an admin alias survives a restart on the same data', async () => {
    const created = await put({ name: 'persisted', description: 'kept', targets: [{ provider: 'openai-b', model: 'mock-model' }] });
    await gateway.stop();
    gateway = await startGateway({ env, configYaml, cwd: gateway.cwd });
    const listed = expectView((await list()).find((model) => model.name === 'persisted'));
    expect(listed).toEqual(created);
    expect((await list()).map((model) => model.name)).toEqual(expect.arrayContaining(['managed', 'from-config', 'from-env']));
    expect(await servedBy(gateway, 'persisted')).toBe('openai-b');
  });
});

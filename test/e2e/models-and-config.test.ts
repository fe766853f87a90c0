import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import {
  gatewayEnv,
  type GatewayProcess,
  MASTER_KEY,
  runGatewayExpectingFailure,
  startGateway,
  UPSTREAM_KEY,
} from '../support/gateway-process.ts';
import { bearer, chatBody, closedPort, listModels, parseJson, rawRequest } from '../support/http.ts';
import { MOCK_CONTENT, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { parseSse } from '../support/streams.ts';
import { chatRequests, lastChatBody, waitForChat } from '../support/upstream.ts';

/** The `address` of the gateway's "listening" log line. */
function listeningAddress(gateway: GatewayProcess): unknown {
  const line = gateway.logs().find((entry) => entry['msg'] === 'model gateway listening');
  return (line?.['address'] as { address?: unknown } | undefined)?.address;
}

async function chat(gateway: GatewayProcess, model: string, token = MASTER_KEY): Promise<Record<string, unknown>> {
  const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(token), body: chatBody(model) });
  expect(reply.status, reply.text).toBe(200);
  return parseJson(reply.text);
}

describe('model listings and provider instances', () => {
  const configured = ['mock-model', 'tool-model', 'org/nested-model'];
  const eastModels = ['mock-model', 'east-model'];
  let primary: MockUpstream;
  let east: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    primary = await startMockUpstream();
    east = await startMockUpstream({ models: eastModels });
    gateway = await startGateway({
      env: {
        MASTER_KEY,
        OPENAI_API_KEY: UPSTREAM_KEY,
        OPENAI_BASE_URL: primary.url,
        OPENAI_MODELS: configured.join(','),
        OPENAI_EAST_API_KEY: 'sk-east',
        OPENAI_EAST_BASE_URL: east.url,
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([primary?.close(), east?.close()]);
  });

  beforeEach(() => {
    primary.reset();
    east.reset();
  });

  it('lists env-configured models as <instance>/<model> entries', async () => {
    const models = await listModels(gateway);
    const own = models.filter((model) => model.id.startsWith('openai/'));
    expect(own.map((model) => model.id)).toEqual(configured.map((id) => `openai/${id}`));
    for (const model of own) {
      expect(model.object).toBe('model');
      expect(typeof model.owned_by).toBe('string');
      expect(model.owned_by.length).toBeGreaterThan(0);
      expect(typeof model.created).toBe('number');
    }
  });

  it('lists the models an instance without a list read from the upstream GET /models', async () => {
    const models = await listModels(gateway);
    const fetched = models.filter((model) => model.id.startsWith('openai-east/'));
    expect(fetched.map((model) => model.id).sort()).toEqual(eastModels.map((id) => `openai-east/${id}`).sort());
    expect(fetched.every((model) => model.object === 'model' && typeof model.owned_by === 'string')).toBe(true);
    expect(models.filter((model) => !model.id.startsWith('openai/') && !model.id.startsWith('openai-east/'))).toEqual([]);
  });

  it('routes <suffix instance>/<model> to that instance with its own key', async () => {
    const completion = await chat(gateway, 'openai-east/mock-model');
    expect(completion['provider']).toBe('openai-east');
    expect(chatRequests(primary)).toHaveLength(0);
    const [received] = chatRequests(east);
    expect(received?.headers.authorization).toBe('Bearer sk-east');
    expect(lastChatBody(east)['model']).toBe('mock-model');
  });

  it('routes a bare model to the instance that serves it', async () => {
    const completion = await chat(gateway, 'east-model');
    expect(completion['provider']).toBe('openai-east');
    expect(lastChatBody(east)['model']).toBe('east-model');
    expect(chatRequests(primary)).toHaveLength(0);
  });

  it('splits a selector at the first slash only when the prefix is an instance', async () => {
    const qualified = await chat(gateway, 'openai/org/nested-model');
    expect(qualified['provider']).toBe('openai');
    expect(lastChatBody(primary)['model']).toBe('org/nested-model');
    const bare = await chat(gateway, 'org/nested-model');
    expect(bare['provider']).toBe('openai');
    expect(lastChatBody(primary)['model']).toBe('org/nested-model');
    expect(chatRequests(east)).toHaveLength(0);
  });

  it('binds all interfaces when a MASTER_KEY is set and HOST is not', () => {
    expect(listeningAddress(gateway)).toBe('0.0.0.0');
  });
});

describe('an upstream that is down at startup', () => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    const port = await closedPort();
    gateway = await startGateway({ env: { MASTER_KEY, OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` } });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('still starts and answers /health', async () => {
    const health = await rawRequest(`${gateway.url}/health`);
    expect(health.status).toBe(200);
    expect(parseJson(health.text)).toEqual({ status: 'ok' });
    expect(await listModels(gateway)).toEqual([]);
  });

  it('answers a request for that instance with a provider_error naming it', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('openai/mock-model') });
    expectEnvelope(reply, { status: 502, type: 'provider_error', provider: 'openai' });
  });
});

describe('YAML configuration', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  const yamlMasterKey = 'yaml-master-key';

  beforeAll(async () => {
    mock = await startMockUpstream();
    const deadPort = await closedPort();
    const configYaml = [
      'server:',
      '  port: 8080',
      '  master_key: ${YAML_MASTER_KEY}',
      'providers:',
      '  yaml-east:',
      '    type: openai',
      '    api_key: ${EAST_KEY:-sk-east-default}',
      '    base_url: ${MOCK_URL}',
      '    models: [east-model, shared-model]',
      '  openai:',
      '    type: openai',
      '    api_key: ${YAML_UPSTREAM_KEY}',
      `    base_url: http://127.0.0.1:${deadPort}/v1`,
      '    models: ["mock-model", "${EXTRA_MODEL:-fallback-model}", shared-model]',
    ].join('\n');
    gateway = await startGateway({
      configYaml,
      // PORT=0 (set by startGateway) and OPENAI_BASE_URL override the file.
      env: { YAML_MASTER_KEY: yamlMasterKey, YAML_UPSTREAM_KEY: 'sk-yaml', MOCK_URL: mock.url, OPENAI_BASE_URL: mock.url },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
  });

  it('reads the providers map with ${VAR} and ${VAR:-default} expanded', async () => {
    const ids = (await listModels(gateway, yamlMasterKey)).map((model) => model.id);
    expect(ids).toEqual([
      'yaml-east/east-model',
      'yaml-east/shared-model',
      'openai/mock-model',
      'openai/fallback-model',
      'openai/shared-model',
    ]);
  });

  it('routes a bare model served by two instances to the first in configuration order', async () => {
    const completion = await chat(gateway, 'shared-model', yamlMasterKey);
    expect(completion['provider']).toBe('yaml-east');
    expect(chatRequests(mock)[0]?.headers.authorization).toBe('Bearer sk-east-default');
  });

  it('takes the master key from an expanded variable', async () => {
    const refused = await rawRequest(`${gateway.url}/v1/models`, { headers: bearer(MASTER_KEY) });
    expectEnvelope(refused, { status: 401, type: 'authentication_error' });
  });

  it('uses the expanded default for the api key of a named instance', async () => {
    const completion = await chat(gateway, 'yaml-east/east-model', yamlMasterKey);
    expect(completion['provider']).toBe('yaml-east');
    expect(chatRequests(mock)[0]?.headers.authorization).toBe('Bearer sk-east-default');
  });

  it('lets the environment override the file', async () => {
    // OPENAI_BASE_URL replaced the dead base_url of the file; the file's api_key stays.
    const completion = await chat(gateway, 'openai/mock-model', yamlMasterKey);
    expect(completion['provider']).toBe('openai');
    expect((completion['choices'] as { message: { content: string } }[])[0]?.message.content).toBe(MOCK_CONTENT);
    expect(chatRequests(mock)[0]?.headers.authorization).toBe('Bearer sk-yaml');
    // PORT=0 replaced the file's port 8080.
    expect(gateway.port).not.toBe(8080);
  });
});

describe.concurrent('configuration errors', () => {
  it('aborts startup on PORT=abc with a message naming PORT', async () => {
    const { code, output } = await runGatewayExpectingFailure({ env: { PORT: 'abc' } });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output).toContain('PORT');
  });

  it('aborts startup on a YAML server.port that is not a number, naming server.port', async () => {
    // An empty PORT leaves the file's value in force.
    const { code, output } = await runGatewayExpectingFailure({ configYaml: 'server:\n  port: "x"\n', env: { PORT: '' } });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output).toContain('server.port');
  });

  it('aborts startup on an unknown provider type, naming the key', async () => {
    const configYaml = 'providers:\n  mine:\n    type: no-such-type\n    api_key: k\n    base_url: http://127.0.0.1:1/v1\n';
    const { code, output } = await runGatewayExpectingFailure({ configYaml });
    expect(code).not.toBe(0);
    expect(output).toContain('providers.mine.type');
  });
});

describe('open mode (no MASTER_KEY)', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: { OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: mock.url, OPENAI_MODELS: 'mock-model' } });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('serves requests without credentials', async () => {
    const models = await rawRequest(`${gateway.url}/v1/models`);
    expect(models.status, models.text).toBe(200);
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { body: chatBody('openai/mock-model') });
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)['provider']).toBe('openai');
  });

  it('logs a warning and binds loopback only', () => {
    const warnings = gateway.logs().filter((entry) => entry['level'] === 40);
    expect(warnings.some((entry) => /MASTER_KEY|open/i.test(String(entry['msg'])))).toBe(true);
    expect(listeningAddress(gateway)).toBe('127.0.0.1');
  });
});

describe('graceful shutdown', () => {
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
  });

  const start = (): Promise<GatewayProcess> => startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'slow,slow-stream' }) });

  it('lets an in-flight request finish on SIGTERM and exits 0', async () => {
    const gateway = await start();
    try {
      const pending = rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('openai/slow') });
      await waitForChat(mock, 'slow');
      const exited = gateway.stop('SIGTERM');
      const reply = await pending;
      expect(reply.status, reply.text).toBe(200);
      expect(parseJson(reply.text)['provider']).toBe('openai');
      expect(await exited).toBe(0);
    } finally {
      await gateway.stop('SIGKILL');
    }
  });

  it('stops waiting for a hanging request after SHUTDOWN_TIMEOUT_SECONDS and still exits 0', async () => {
    const gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'hang', SHUTDOWN_TIMEOUT_SECONDS: '1' }) });
    try {
      const pending = rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('openai/hang') }).then(
        (reply) => reply.status,
        () => 'connection closed',
      );
      const upstream = await waitForChat(mock, 'hang');
      const signalled = Date.now();
      const code = await gateway.stop('SIGTERM');
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(900);
      expect(Date.now() - signalled).toBeLessThan(4000);
      expect(code).toBe(0);
      expect(await pending).not.toBe(200);
      await mock.waitFor(() => upstream.aborted);
    } finally {
      await gateway.stop('SIGKILL');
    }
  });

  it('lets an in-flight stream run to [DONE] on SIGTERM and exits 0', async () => {
    const gateway = await start();
    try {
      const response = await request(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody('openai/slow-stream', { stream: true })),
      });
      expect(response.statusCode).toBe(200);
      let text = '';
      let exited: Promise<number | null> | null = null;
      for await (const piece of response.body) {
        text += String(piece);
        exited ??= gateway.stop('SIGTERM');
      }
      expect(parseSse(text).length).toBeGreaterThan(10);
      expect(await exited).toBe(0);
    } finally {
      await gateway.stop('SIGKILL');
    }
  });
});

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, parseJson, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// A provider instance dropped for a missing key is said where the user looks (issue 31): the
// readiness check lists it as disabled with the setting to give, the log names the variable,
// and a request for its model answers 503 provider_unavailable instead of 404 model_not_found.

describe('a provider instance without its key', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({
      env: {
        MASTER_KEY,
        OPENAI_API_KEY: UPSTREAM_KEY,
        OPENAI_BASE_URL: mock.url,
        OPENAI_MODELS: 'mock-model',
        ANTHROPIC_BASE_URL: mock.url,
      },
      configYaml: [
        'providers:',
        '  groq:',
        '    type: openai-compatible',
        `    base_url: ${mock.url}`,
        '    api_key: ${GROQ_KEY_NOT_SET}',
        '    models: [llama-only-here]',
        'virtual_models:',
        '  - name: team-default',
        '    strategy: failover',
        '    targets: [{ provider: groq, model: llama-only-here }, { provider: openai, model: mock-model }]',
      ].join('\n'),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('is listed by /health/ready as disabled with the missing setting, and the gateway is degraded', async () => {
    const reply = await rawRequest(`${gateway.url}/health/ready`);
    expect(reply.status).toBe(200);
    const body = parseJson(reply.text) as {
      status: string;
      components: { models: { providers: Record<string, Record<string, unknown>> } };
    };
    expect(body.status).toBe('degraded');
    const providers = body.components.models.providers;
    expect(providers['openai']?.['status']).not.toBe('disabled');
    expect(providers['groq']).toMatchObject({ status: 'disabled', setting: 'GROQ_KEY_NOT_SET' });
    expect(String(providers['groq']?.['reason'])).toContain('GROQ_KEY_NOT_SET');
    // Declared by ANTHROPIC_BASE_URL alone: the variable it lacks is ANTHROPIC_API_KEY.
    expect(providers['anthropic']).toMatchObject({ status: 'disabled', setting: 'ANTHROPIC_API_KEY' });
  });

  it('logs which variable is missing', () => {
    const warning = gateway.logs().find((line) => String(line['msg']).includes('provider instance "groq" is disabled'));
    expect(String(warning?.['msg'])).toContain('GROQ_KEY_NOT_SET');
  });

  it('answers 503 provider_unavailable naming the instance and the setting, for <instance>/<model> and for a model only it lists', async () => {
    for (const model of ['groq/llama-only-here', 'llama-only-here', 'anthropic/claude-x']) {
      const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: bearer(), body: chatBody(model) });
      const error = expectEnvelope(reply, { status: 503, type: 'provider_error', code: 'provider_unavailable', param: 'model' });
      const [instance, setting] = model.startsWith('anthropic') ? ['anthropic', 'ANTHROPIC_API_KEY'] : ['groq', 'GROQ_KEY_NOT_SET'];
      expect(error.message).toContain(`"${instance}"`);
      expect(error.message).toContain(setting);
    }
    // A virtual model skips a target on the disabled instance, as it skips one nobody serves.
    const virtual = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: bearer(),
      body: chatBody('team-default'),
    });
    expect(virtual.status, virtual.text).toBe(200);
    expect(parseJson(virtual.text)['provider']).toBe('openai');
    // The registered instance still serves, and a model nobody declares is still 404.
    const served = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: bearer(),
      body: chatBody('mock-model'),
    });
    expect(served.status).toBe(200);
    const unknown = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: bearer(),
      body: chatBody('no-such-model'),
    });
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'model_not_found' });
  });

  it('suggests the closest listed models for an unknown one, but not to a key with a model allowlist', async () => {
    const chat = (model: string, token = MASTER_KEY) =>
      rawRequest(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: bearer(token), body: chatBody(model) });
    const bare = expectEnvelope(await chat('mock-modle'), { status: 404, type: 'not_found_error', code: 'model_not_found' });
    expect(bare.message).toContain('did you mean "mock-model"');
    const qualified = expectEnvelope(await chat('openai/mock-mdel'), { status: 404, type: 'not_found_error', code: 'model_not_found' });
    expect(qualified.message).toContain('did you mean "openai/mock-model"');
    const retrieved = await rawRequest(`${gateway.url}/v1/models/openai%2Fmock-modle`, { headers: bearer() });
    expect(expectEnvelope(retrieved, { status: 404, type: 'not_found_error', code: 'model_not_found' }).message).toContain(
      'did you mean "openai/mock-model"',
    );
    const created = await rawRequest(`${gateway.url}/admin/api-keys`, {
      method: 'POST',
      headers: bearer(),
      body: { name: 'narrow', allowed_models: ['openai/other-model'] },
    });
    expect(created.status, created.text).toBe(201);
    const narrow = String(parseJson(created.text)['key']);
    const hidden = expectEnvelope(await chat('mock-modle', narrow), { status: 404, type: 'not_found_error', code: 'model_not_found' });
    expect(hidden.message).not.toContain('did you mean');
  });

  it('is enabled by a hot reload that gives its key, and leaves the readiness list', async () => {
    const yaml = readFileSync(join(gateway.cwd, 'config.yaml'), 'utf8');
    writeFileSync(join(gateway.cwd, 'config.yaml'), yaml.replace('${GROQ_KEY_NOT_SET}', 'sk-groq'));
    const reloaded = await rawRequest(`${gateway.url}/admin/reload`, { method: 'POST', headers: bearer(), body: {} });
    expect(reloaded.status, reloaded.text).toBe(200);
    const ready = parseJson((await rawRequest(`${gateway.url}/health/ready`)).text) as {
      components: { models: { providers: Record<string, Record<string, unknown>> } };
    };
    expect(ready.components.models.providers['groq']?.['status']).not.toBe('disabled');
    expect(ready.components.models.providers['anthropic']?.['status']).toBe('disabled');
    const served = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: bearer(),
      body: chatBody('groq/llama-only-here'),
    });
    expect(served.status, served.text).toBe(200);
  });
});

import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, type Call } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { answerSchema, type Json } from '../support/openapi.ts';
import { chatAt } from '../support/rate-limits.ts';

// The admin API in GET /openapi.json (issue 21): request bodies are the zod schemas the routes
// validate with, answers are closed schemas (a field the document does not name fails), and
// every admin answer recorded here, success or error, validates against the document.

const configYaml = `
mcp:
  servers:
    old-tools: { url: "http://127.0.0.1:9/mcp" }
`;

type Method = NonNullable<Call['method']>;

describe('OpenAPI description of the admin API', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let document: Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const checked = new Set<string>();

  /** Sends `body` (which must match the documented request body, unless `refused`) and validates the answer. */
  async function exchange(method: Method, url: string, path = url.split('?')[0] ?? url, body?: unknown, refused = false) {
    const operation = ((document['paths'] as Json)[path] as Json)[method.toLowerCase()] as Json;
    if (body !== undefined && !refused) {
      const content = (operation['requestBody'] as Json | undefined)?.['content'] as Json | undefined;
      const requestSchema = (content?.['application/json'] as Json | undefined)?.['schema'] as Json | undefined;
      const validBody = ajv.compile(requestSchema ?? { not: {} });
      expect(validBody(body), `${method} ${path} body: ${JSON.stringify(validBody.errors)}`).toBe(true);
    }
    const reply = await call(gateway, url, { method, ...(body === undefined ? {} : { body }) });
    const schema = answerSchema(document, path, method.toLowerCase(), reply.status);
    if (schema === null) {
      expect(reply.text, `${method} ${url} ${reply.status} has no body`).toBe('');
    } else {
      const validate = ajv.compile(schema);
      expect(
        validate(JSON.parse(reply.text)),
        `${method} ${url} ${reply.status}: ${JSON.stringify(validate.errors)} in ${reply.text}`,
      ).toBe(true);
    }
    checked.add(`${method} ${path}`);
    return reply;
  }
  const ok = async (method: Method, url: string, body?: unknown, path?: string): Promise<Json> => {
    const reply = await exchange(method, url, path, body);
    expect(reply.status, `${method} ${url}: ${reply.text}`).toBeLessThan(300);
    return reply.text === '' ? {} : (JSON.parse(reply.text) as Json);
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    const env = gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', REQUEST_LOG_ENABLED: 'true', USAGE_ENABLED: 'true', MCP_ENABLED: 'true' });
    gateway = await startGateway({ env, configYaml });
    document = JSON.parse((await call(gateway, '/openapi.json', { token: null })).text) as Json;
    expect((await chatAt(gateway, '/team/a')).status).toBe(200);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('describes every admin answer with a closed schema', () => {
    const paths = document['paths'] as Record<string, Record<string, Json>>;
    const open: string[] = [];
    for (const [path, methods] of Object.entries(paths)) {
      if (!path.startsWith('/admin')) continue;
      for (const [method, operation] of Object.entries(methods)) {
        const success = Object.keys(operation['responses'] as Json).find((status) => status.startsWith('2')) ?? '200';
        const schema = answerSchema(document, path, method, Number(success));
        if (schema === null) continue;
        const object = schema['type'] === 'array' ? (schema['items'] as Json) : schema;
        const variants = (object['anyOf'] ?? object['oneOf'] ?? [object]) as Json[];
        if (variants.some((variant) => variant['additionalProperties'] !== false)) open.push(`${method} ${path}`);
      }
    }
    expect(open).toEqual([]);
  });

  it('API keys, whoami, audit, usage and the request log answer as described', async () => {
    const created = await ok('POST', '/admin/api-keys', { name: 'doc', user_path: '/team/doc', allowed_models: ['openai/mock-model'] });
    const id = String(created['id']);
    await ok('GET', '/admin/api-keys?window=7d', undefined, '/admin/api-keys');
    await ok('PATCH', `/admin/api-keys/${id}`, { role: 'viewer', allowed_endpoints: null }, '/admin/api-keys/{id}');
    await ok('POST', `/admin/api-keys/${id}/rotate`, { grace_seconds: 60 }, '/admin/api-keys/{id}/rotate');
    await ok('POST', `/admin/api-keys/${id}/deactivate`, undefined, '/admin/api-keys/{id}/deactivate');
    await ok('GET', '/admin/whoami');
    expect(((await ok('GET', '/admin/audit'))['entries'] as unknown[]).length).toBeGreaterThan(0);
    await ok('GET', '/admin/usage?group_by=model');
    await ok('GET', '/admin/usage?group_by=day&bucket=hour');
    // The log is written in batches (a tick, 100 ms by default): wait for the chat's entry.
    let entries: Json[] = [];
    await expect
      .poll(async () => (entries = (await ok('GET', '/admin/requests'))['requests'] as Json[]).length, { timeout: 10_000 })
      .toBeGreaterThan(0);
    const [entry] = entries;
    await ok('GET', `/admin/requests/${String(entry?.['id'])}`, undefined, '/admin/requests/{id}');
    await ok('GET', '/admin/requests/stats?group_by=model&bucket=hour', undefined, '/admin/requests/stats');
    // Refusals follow the error envelope, naming the field the schema refused.
    const refused = await exchange('POST', '/admin/api-keys', undefined, { name: 'x', role: 'owner' }, true);
    expect(refused.status).toBe(400);
    expect((JSON.parse(refused.text) as { error: Json }).error['param']).toBe('role');
  });

  it('routing, budgets and rate limits answer as described', async () => {
    await ok('PUT', '/admin/virtual-models', { name: 'doc-alias', targets: [{ provider: 'openai', model: 'mock-model' }] });
    await ok('GET', '/admin/virtual-models');
    await ok('GET', '/admin/models');
    await ok('DELETE', '/admin/virtual-models', { name: 'doc-alias' });
    await ok('PUT', '/admin/failover-rules', { model: 'openai/mock-model', fallbacks: ['openai/other'] });
    await ok('GET', '/admin/failover-rules');
    await ok('DELETE', '/admin/failover-rules', { model: 'openai/mock-model' });
    await ok('PUT', '/admin/budgets', { user_path: '/team', period: 'daily', amount: 5 });
    await ok('GET', '/admin/budgets');
    await ok('DELETE', '/admin/budgets', { user_path: '/team', period: 'daily' });
    await ok('PUT', '/admin/rate-limits', { user_path: '/team', limit_key: { period: 'minute' }, max_requests: 10 });
    await ok('GET', '/admin/rate-limits');
    await ok('POST', '/admin/rate-limits/reset-one', { scope: 'user_path', subject: '/team', period: 'minute' });
    await ok('DELETE', '/admin/rate-limits', { scope: 'user_path', subject: '/team', limit_key: { period: 'minute' } });
    await ok('POST', '/admin/rate-limits/reset', { confirmation: 'reset' });
    const refused = await exchange('PUT', '/admin/budgets', undefined, { user_path: '/team', period: 'daily', amount: -1 }, true);
    expect(JSON.parse(refused.text)).toMatchObject({ error: { code: 'invalid_body', param: 'amount' } });
  });

  it('MCP servers and virtual servers answer as described', async () => {
    await ok('GET', '/admin/mcp-servers');
    await ok('PUT', '/admin/mcp-servers', { name: 'doc-tools', url: 'http://127.0.0.1:9/mcp' });
    await ok('GET', '/admin/mcp-servers/doc-tools/catalog', undefined, '/admin/mcp-servers/{slug}/catalog');
    await ok('POST', '/admin/mcp-servers/doc-tools/reconnect', undefined, '/admin/mcp-servers/{slug}/reconnect');
    await ok('PUT', '/admin/mcp-virtual-servers', { name: 'doc-virtual', servers: ['doc-tools', 'old-tools'] });
    await ok('GET', '/admin/mcp-virtual-servers');
    await ok('DELETE', '/admin/mcp-virtual-servers/doc-virtual', undefined, '/admin/mcp-virtual-servers/{name}');
    await ok('DELETE', '/admin/mcp-servers/doc-tools', undefined, '/admin/mcp-servers/{slug}');
    await ok('POST', '/admin/reload');
  });

  it('guardrails answer as described', async () => {
    await ok('PUT', '/admin/guardrails', { name: 'doc-pii', type: 'pii', entities: ['email'] });
    await ok('PUT', '/admin/guardrails', { name: 'doc-hook', type: 'webhook', url: 'http://127.0.0.1:9/hook', secret: 's3cret' });
    const listed = await ok('GET', '/admin/guardrails');
    expect(JSON.stringify(listed)).not.toContain('s3cret');
    await ok('GET', '/admin/guardrails/doc-pii', undefined, '/admin/guardrails/{name}');
    await ok('DELETE', '/admin/guardrails', { name: 'doc-hook' });
    const refused = await exchange('PUT', '/admin/guardrails', undefined, { name: 'doc-bad', type: 'pii', entities: ['dna'] }, true);
    expect(refused.status).toBe(400);
  });

  it('covered every admin operation the document lists', () => {
    const paths = document['paths'] as Record<string, Json>;
    const listed = Object.entries(paths).flatMap(([path, methods]) =>
      path.startsWith('/admin') ? Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`) : [],
    );
    // Body forms of the MCP deletes (the path forms are exercised above).
    const missing = listed.filter((operation) => !checked.has(operation));
    expect(missing).toEqual(['DELETE /admin/mcp-servers', 'DELETE /admin/mcp-virtual-servers']);
  });
});

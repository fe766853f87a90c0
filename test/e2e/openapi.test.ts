import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { answerSchema, type Json, lintOpenApi } from '../support/openapi.ts';

// GET /openapi.json (issue 21): every route the built gateway registered is described (the
// document lists any that is not under x-undocumented-routes), and real answers of the gateway
// validate against the schemas the document states for them.

describe('OpenAPI description', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let document: Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  async function expectValid(path: string, method: string, url: string, init: { method?: 'GET' | 'POST'; body?: unknown } = {}) {
    const reply = await rawRequest(`${gateway.url}${url}`, { ...init, headers: bearer() });
    const validate = ajv.compile(answerSchema(document, path, method, reply.status) ?? {});
    const valid = validate(JSON.parse(reply.text));
    expect(valid, `${url} ${reply.status}: ${JSON.stringify(validate.errors)} in ${reply.text}`).toBe(true);
    return reply;
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', METRICS_ENABLED: 'true' }) });
    const reply = await rawRequest(`${gateway.url}/openapi.json`);
    expect(reply.status).toBe(200);
    document = JSON.parse(reply.text) as Json;
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('describes every registered route and is public', () => {
    expect(document['openapi']).toBe('3.1.0');
    expect(document['x-undocumented-routes']).toBeUndefined();
    const paths = document['paths'] as Record<string, Json>;
    for (const [path, methods] of [
      ['/v1/chat/completions', ['post']],
      ['/v1/models/{path}', ['get', 'post']],
      ['/admin/rate-limits', ['get', 'put', 'delete']],
      ['/p/{instance}/{path}', ['get', 'post', 'put', 'patch', 'delete']],
      ['/mcp/{name}', ['get', 'post', 'delete']],
      ['/metrics', ['get']],
      ['/health/ready', ['get']],
    ] as const) {
      for (const method of methods) expect(paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    // A count that moves whenever a route is added or dropped without this test seeing it.
    const operations = Object.values(paths).reduce((total, methods) => total + Object.keys(methods).length, 0);
    expect(operations).toBeGreaterThanOrEqual(85);
  });

  it('passes a structural lint: unique operationIds, every $ref resolves, path parameters declared both ways', () => {
    const problems = lintOpenApi(document);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('declares the bearer scheme as the spec does and marks public routes', () => {
    const schemes = (document['components'] as Json)['securitySchemes'] as Json;
    expect(schemes['bearerAuth']).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    const paths = document['paths'] as Record<string, Record<string, Json>>;
    expect(paths['/health']?.['get']?.['security']).toEqual([]);
    expect(paths['/admin/budgets']?.['get']?.['security']).toEqual([{ bearerAuth: [] }]);
    const chat = paths['/v1/chat/completions']?.['post'] as Json;
    const body = ((chat['requestBody'] as Json)['content'] as Json)['application/json'] as Json;
    expect(body['schema']).toMatchObject({ required: ['model'], additionalProperties: true });
  });

  it('recorded answers validate: health, models, rate limits, error envelopes', async () => {
    await expectValid('/health', 'get', '/health');
    await expectValid('/health/ready', 'get', '/health/ready');
    await expectValid('/v1/models', 'get', '/v1/models');
    await expectValid('/admin/rate-limits', 'get', '/admin/rate-limits');
    expect((await expectValid('/admin/reload', 'post', '/admin/reload', { method: 'POST', body: {} })).status).toBe(200);
    const failed = await expectValid('/v1/chat/completions', 'post', '/v1/chat/completions', { method: 'POST', body: { messages: [] } });
    expect(failed.status).toBe(400);
    const unknown = await expectValid('/admin/rate-limits/reset', 'post', '/admin/rate-limits/reset', { method: 'POST', body: {} });
    expect(unknown.status).toBe(400);
  });

  it('rejects an answer that does not match (the validation can fail)', () => {
    const validate = ajv.compile(answerSchema(document, '/v1/models', 'get', 200) ?? {});
    expect(validate({ object: 'list', data: [{ id: 7 }] })).toBe(false);
    const envelope = ajv.compile(answerSchema(document, '/v1/models', 'get', 500) ?? {});
    expect(envelope({ error: { message: 'x' } })).toBe(false);
  });

  it("passes Redocly's strictest built-in ruleset with no error and no warning but the one ambiguity OpenAI's API has (recommended-strict)", async () => {
    const cli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');
    const folder = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(folder, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      const env = { PATH: process.env.PATH ?? '', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
      const args = [cli, 'lint', file, '--extends=recommended-strict', '--format=json'];
      const run = await promisify(execFile)(process.execPath, args, { env, timeout: 60_000, maxBuffer: 16 << 20 }).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
      );
      const report = JSON.parse(run.stdout) as { totals: Record<string, number>; problems: { ruleId: string; message: string }[] };
      // OpenAI's API has this pair too; a static segment wins (Fastify, as OpenAI): `/v1/videos/characters/content` is a character (ADR 40).
      const acknowledged = [
        'no-ambiguous-paths: Paths should resolve unambiguously. Found two ambiguous paths: `/v1/videos/{video_id}/content` and `/v1/videos/characters/{character_id}`.',
      ];
      expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual(acknowledged);
      expect(report.totals).toMatchObject({ errors: acknowledged.length, warnings: 0 });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

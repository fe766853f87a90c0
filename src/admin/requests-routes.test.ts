import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installErrorHandlers } from '../http/hooks.ts';
import { readRequestLogQuery, registerRequestLogRoutes } from './requests-routes.ts';

describe('GET /admin/requests query', () => {
  it('reads every filter of issue 16', () => {
    const cursor = Buffer.from(JSON.stringify([1_700_000_000_000, 'row-9'])).toString('base64url');
    expect(
      readRequestLogQuery({
        from: '2026-11-01',
        to: '2026-11-02',
        user_path: '/Team/',
        api_key_id: 'k1',
        provider: 'openai',
        model: 'gpt-4o',
        status: '5xx',
        code: 'upstream_error',
        endpoint: '/v1/embeddings',
        cache_hit: 'false',
        q: '01a2',
        limit: '500',
        cursor,
      }),
    ).toEqual({
      from: Date.UTC(2026, 10, 1),
      to: Date.UTC(2026, 10, 3),
      userPath: '/Team',
      apiKeyId: 'k1',
      provider: 'openai',
      model: 'gpt-4o',
      status: { statusClass: 5 },
      errorCode: 'upstream_error',
      endpoint: '/v1/embeddings',
      cacheHit: false,
      text: '01a2',
      limit: 500,
      after: { time: 1_700_000_000_000, rowId: 'row-9' },
    });
    expect(readRequestLogQuery({})).toEqual({ limit: 50 });
    expect(readRequestLogQuery({ status: '429' }).status).toEqual({ exact: 429 });
  });

  it('answers 503 when the request log is off', async () => {
    const app = Fastify();
    installErrorHandlers(app, { maxBytes: 1024, maxMs: 1000 });
    registerRequestLogRoutes(app, null);
    const reply = await app.inject({ url: '/admin/requests' });
    expect(reply.statusCode).toBe(503);
    expect(reply.json()).toMatchObject({ error: { code: 'feature_unavailable' } });
    expect((await app.inject({ url: '/admin/requests/abc' })).statusCode).toBe(503);
    await app.close();
  });
});

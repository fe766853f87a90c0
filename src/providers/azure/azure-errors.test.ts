import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mapUpstreamError } from '../upstream-errors.ts';

// Azure OpenAI's error bodies (test/fixtures/azure/, after Azure's REST reference) through the
// one upstream error mapper: the CONTRACT 4 envelope with Azure's message kept.

const fixture = (name: string): string => readFileSync(resolve(import.meta.dirname, '../../../test/fixtures/azure', name), 'utf8');

describe('Azure error bodies', () => {
  it('a content filter refusal is a 400 invalid_request_error with code content_filter', () => {
    const error = mapUpstreamError(400, fixture('content-filter-error.json'), 'az');
    expect({ type: error.type, status: error.status, code: error.code, param: error.param, provider: error.provider }).toEqual({
      type: 'invalid_request_error',
      status: 400,
      code: 'content_filter',
      param: 'prompt',
      provider: 'az',
    });
    expect(error.message).toMatch(/^The response was filtered due to the prompt triggering Azure OpenAI's content management policy/);
  });

  it('throttling is a 429 with Retry-After kept, so failover and retries work', () => {
    const error = mapUpstreamError(429, fixture('rate-limit-error.json'), 'az', { 'retry-after': '7' });
    expect([error.type, error.status, error.code, error.headers['Retry-After']]).toEqual([
      'rate_limit_error',
      429,
      'upstream_rate_limited',
      '7',
    ]);
    expect(error.message).toMatch(/exceeded token rate limit/);
  });

  it('a bad key is a 401 and a missing deployment a 404, messages kept', () => {
    const unauthorized = mapUpstreamError(401, fixture('unauthorized-error.json'), 'az');
    expect([unauthorized.type, unauthorized.status]).toEqual(['authentication_error', 401]);
    expect(unauthorized.message).toMatch(/invalid subscription key/);
    const missing = mapUpstreamError(404, fixture('deployment-not-found-error.json'), 'az');
    expect([missing.type, missing.status, missing.message]).toEqual([
      'not_found_error',
      404,
      expect.stringMatching(/deployment for this resource does not exist/),
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import type { Principal } from './principal.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { thrown } from '../testing/thrown.ts';
import {
  assertEndpointAllowed,
  assertModelAllowed,
  assertPassthroughAllowed,
  endpointAllowed,
  listedModelAllowed,
  modelAllowed,
} from './allowlist.ts';

const principal = (allowedModels: string[] | null, allowedEndpoints: string[] | null = null): Principal => ({
  kind: 'jwt',
  keyId: null,
  boundUserPath: null,
  allowedModels,
  allowedEndpoints,
});

describe('model allowlist', () => {
  const allowed = ['openai/gpt-4o', 'claude-sonnet', 'local/*', 'smart'];

  it('matches concrete selectors, bare ids on any instance, instance wildcards and virtual names', () => {
    expect(modelAllowed(allowed, { instance: 'openai', model: 'gpt-4o' }, null)).toBe(true);
    expect(modelAllowed(allowed, { instance: 'azure', model: 'gpt-4o' }, null)).toBe(false);
    expect(modelAllowed(allowed, { instance: 'anthropic', model: 'claude-sonnet' }, null)).toBe(true);
    expect(modelAllowed(allowed, { instance: 'local', model: 'llama3' }, null)).toBe(true);
    expect(modelAllowed(allowed, { instance: 'localx', model: 'llama3' }, null)).toBe(false);
    expect(modelAllowed(allowed, { virtual: 'smart' }, null)).toBe(true);
    expect(modelAllowed(allowed, { virtual: 'cheap' }, null)).toBe(false);
  });

  it('a virtual model is asked for by name only: a wildcard covering its targets does not allow it', () => {
    expect(modelAllowed(['openai/*'], { virtual: 'smart' }, null)).toBe(false);
  });

  it('refuses with 403 model_not_allowed, and lets anything through without an allowlist', () => {
    const plan = { virtualModel: null, cacheTarget: 'openai/gpt-4o-mini' };
    const error = thrown(GatewayError, () => assertModelAllowed(principal(allowed), plan, null));
    expect(error).toMatchObject({ status: 403, type: 'permission_error', code: 'model_not_allowed' });
    expect(() => assertModelAllowed(principal(null), plan, null)).not.toThrow();
    expect(() => assertModelAllowed(principal(allowed), { virtualModel: 'smart', cacheTarget: 'virtual:smart' }, null)).not.toThrow();
  });

  it('an entry naming a virtual model opens that virtual model only, never a concrete model of its name', () => {
    const virtualModels = new Map([['smart', {}]]);
    expect(modelAllowed(['smart'], { instance: 'oai', model: 'smart' }, virtualModels)).toBe(false);
    expect(modelAllowed(['smart'], { virtual: 'smart' }, virtualModels)).toBe(true);
    expect(modelAllowed(['oai/smart'], { instance: 'oai', model: 'smart' }, virtualModels)).toBe(true);
    const plan = { virtualModel: null, cacheTarget: 'oai/smart' };
    expect(thrown(GatewayError, () => assertModelAllowed(principal(['smart']), plan, virtualModels)).code).toBe('model_not_allowed');
    expect(listedModelAllowed(principal(['smart']), { id: 'oai/smart', owned_by: 'oai' }, virtualModels)).toBe(false);
    expect(() => assertPassthroughAllowed(principal(['smart']), 'oai', ['smart'], virtualModels)).toThrow(GatewayError);
  });

  it('passthrough: every model named must be allowed; none readable needs <instance>/*', () => {
    const narrow = principal(['gem/gemini-flash']);
    expect(() => assertPassthroughAllowed(narrow, 'gem', ['gemini-flash'], null)).not.toThrow();
    expect(thrown(GatewayError, () => assertPassthroughAllowed(narrow, 'gem', ['gemini-pro', 'gemini-flash'], null)).message).toContain(
      'gem/gemini-pro',
    );
    expect(() => assertPassthroughAllowed(narrow, 'gem', null, null)).toThrow(GatewayError);
    expect(() => assertPassthroughAllowed(narrow, 'gem', [], null)).toThrow(GatewayError);
    expect(() => assertPassthroughAllowed(principal(['gem/*']), 'gem', null, null)).not.toThrow();
  });

  it('filters /v1/models entries', () => {
    expect(listedModelAllowed(principal(allowed), { id: 'openai/gpt-4o', owned_by: 'openai' }, null)).toBe(true);
    expect(listedModelAllowed(principal(allowed), { id: 'openai/o3', owned_by: 'openai' }, null)).toBe(false);
    expect(listedModelAllowed(principal(allowed), { id: 'smart', owned_by: 'virtual' }, null)).toBe(true);
    expect(listedModelAllowed(principal([]), { id: 'smart', owned_by: 'virtual' }, null)).toBe(false);
  });
});

describe('endpoint allowlist', () => {
  it('covers a path and what lies under it, segment-wise', () => {
    expect(endpointAllowed(['/v1/files'], 'GET', '/v1/files/file-1/content')).toBe(true);
    expect(endpointAllowed(['/v1/chat/completions'], 'POST', '/v1/chat/completions')).toBe(true);
    expect(endpointAllowed(['/v1/chat'], 'POST', '/v1/chatty')).toBe(false);
    expect(endpointAllowed(['/v1/chat/completions'], 'POST', '/v1/embeddings')).toBe(false);
  });

  it('/mcp covers every MCP server; a bare name covers that server only', () => {
    expect(endpointAllowed(['/mcp'], 'POST', '/mcp')).toBe(true);
    expect(endpointAllowed(['/mcp'], 'POST', '/mcp/github')).toBe(true);
    expect(endpointAllowed(['github'], 'POST', '/mcp/github')).toBe(true);
    expect(endpointAllowed(['github'], 'POST', '/mcp/jira')).toBe(false);
    expect(endpointAllowed(['github'], 'POST', '/mcp')).toBe(false);
    expect(endpointAllowed(['/mcp/github'], 'POST', '/mcp/github')).toBe(true);
  });

  it('passthrough to an account-wide resource needs its endpoint, not only /p', () => {
    for (const path of ['/p/oai/v1/files', '/p/oai/files/file-1/content', '/p/oai/%66iles', '/p/oai/v1/batches/b1/cancel']) {
      expect(endpointAllowed(['/p'], 'GET', path), path).toBe(false);
      expect(endpointAllowed(['/p/oai'], 'GET', path), path).toBe(false);
    }
    expect(endpointAllowed(['/p', '/v1/files'], 'GET', '/p/oai/v1/files')).toBe(true);
    expect(endpointAllowed(['/p/oai/v1/files'], 'GET', '/p/oai/v1/files/f1')).toBe(true);
    expect(endpointAllowed(['/p', '/v1/files'], 'POST', '/p/oai/v1/batches')).toBe(false);
    expect(endpointAllowed(['/p', '/v1/batches'], 'POST', '/p/oai/v1/batches')).toBe(true);
    expect(endpointAllowed(['/p'], 'POST', '/p/ant/v1/messages/batches')).toBe(false);
    expect(endpointAllowed(['/p'], 'POST', '/p/gem/models/gemini-pro:batchGenerateContent')).toBe(false);
    expect(endpointAllowed(['/p'], 'GET', '/p/oai/v1/responses/resp_1')).toBe(false);
    expect(endpointAllowed(['/p'], 'POST', '/p/oai/v1/uploads')).toBe(false);
    expect(endpointAllowed(['/p'], 'POST', '/p/oai/v1/fine_tuning/jobs')).toBe(false);
    expect(endpointAllowed(['/p'], 'POST', '/p/oai/v1/chat/completions')).toBe(true);
    expect(endpointAllowed(['/p/oai'], 'POST', '/p/gem/models/gemini-pro:generateContent')).toBe(false);
    expect(endpointAllowed(['/p'], 'POST', '/p/gem/models/gemini-pro:batchEmbedContents')).toBe(true);
    expect(endpointAllowed(['/p'], 'POST', '/p/vx/projects/p1/locations/us/batchPredictionJobs')).toBe(false);
  });

  it('listing models stays allowed (GET only)', () => {
    expect(endpointAllowed([], 'GET', '/v1/models')).toBe(true);
    expect(endpointAllowed([], 'POST', '/v1/models/gemini-2.0-flash:generateContent')).toBe(false);
  });

  it('refuses with 403 endpoint_not_allowed, ignoring the query', () => {
    const error = thrown(GatewayError, () =>
      assertEndpointAllowed(principal(null, ['/v1/embeddings']), 'POST', '/v1/chat/completions?x=1'),
    );
    expect(error).toMatchObject({ status: 403, type: 'permission_error', code: 'endpoint_not_allowed' });
    expect(() => assertEndpointAllowed(principal(null, ['/v1/embeddings']), 'POST', '/v1/embeddings?x=1')).not.toThrow();
  });
});

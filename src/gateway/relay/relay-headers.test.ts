import { describe, expect, it } from 'vitest';
import { clientResponseHeaders, upstreamRequestHeaders } from './relay-headers.ts';

describe('upstreamRequestHeaders', () => {
  it('drops client credentials, hop-by-hop headers, the ones Connection names and the user-path header', () => {
    const kept = upstreamRequestHeaders(
      {
        authorization: 'Bearer gateway-key',
        'x-api-key': 'k',
        'api-key': 'k',
        'x-goog-api-key': 'k',
        cookie: 'a=1',
        host: 'gateway:8080',
        'content-length': '10',
        'transfer-encoding': 'chunked',
        connection: 'keep-alive, X-Secret-Hop',
        'x-secret-hop': 'hop',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        trailer: 'x',
        upgrade: 'h2c',
        'proxy-authorization': 'Basic x',
        expect: '100-continue',
        'x-forwarded-for': '10.0.0.1',
        forwarded: 'for=10.0.0.1',
        'x-request-id': 'abc',
        'x-team-path': '/team',
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        accept: ['a', 'b'] as unknown as string,
      },
      'X-Team-Path',
    );
    expect(kept).toEqual({ 'content-type': 'application/json', 'anthropic-version': '2023-06-01', accept: 'a, b' });
  });

  it('drops the headers that select an account or project unless the instance forwards them', () => {
    const account = {
      'openai-organization': 'org-victim',
      'openai-project': 'proj_victim',
      'x-goog-user-project': 'billing-victim',
      'x-hf-bill-to': 'victim-org',
    };
    const headers = { ...account, 'content-type': 'application/json', 'openai-beta': 'assistants=v2' };
    expect(upstreamRequestHeaders(headers, 'x-user-path')).toEqual({ 'content-type': 'application/json', 'openai-beta': 'assistants=v2' });
    expect(upstreamRequestHeaders(headers, 'x-user-path', { forwardAccountHeaders: false })).not.toHaveProperty('openai-organization');
    expect(upstreamRequestHeaders(headers, 'x-user-path', { forwardAccountHeaders: true })).toEqual(headers);
  });
});

describe('clientResponseHeaders', () => {
  it('drops cookies, hop-by-hop headers and the ones the gateway sets itself', () => {
    const kept = clientResponseHeaders({
      'Content-Type': 'application/json',
      'Set-Cookie': ['a=1', 'b=2'],
      Connection: 'close, x-hop',
      'x-hop': '1',
      'content-length': '5',
      'transfer-encoding': 'chunked',
      'x-request-id': 'req_upstream',
      'openai-processing-ms': '12',
      'x-ratelimit-remaining-requests': '99',
      vary: undefined,
    });
    expect(kept).toEqual({ 'content-type': 'application/json', 'openai-processing-ms': '12', 'x-ratelimit-remaining-requests': '99' });
  });
});

import { describe, expect, it } from 'vitest';
import { mapUpstreamError, readErrorDetails } from './upstream-errors.ts';

const openAIError = (message: string) => JSON.stringify({ error: { message, type: 'x', param: 'messages', code: 'c' } });

describe('mapUpstreamError', () => {
  it.each([
    [401, 'authentication_error', 401],
    [403, 'authentication_error', 403],
    [404, 'not_found_error', 404],
    [429, 'rate_limit_error', 429],
    [400, 'invalid_request_error', 400],
    [422, 'invalid_request_error', 422],
    [500, 'provider_error', 500],
    [503, 'provider_error', 503],
    [302, 'provider_error', 502],
  ])('maps upstream %i to %s with status %i', (status, type, expected) => {
    const error = mapUpstreamError(status, openAIError('upstream says no'), 'openai-east');
    expect(error.type).toBe(type);
    expect(error.status).toBe(expected);
    expect(error.message).toBe('upstream says no');
    expect(error.provider).toBe('openai-east');
  });

  it('keeps the upstream param and carries a numeric Retry-After over', () => {
    const error = mapUpstreamError(429, openAIError('slow down'), 'openai', { 'retry-after': '7' });
    expect(error.param).toBe('messages');
    expect(error.headers).toEqual({ 'Retry-After': '7' });
    expect(mapUpstreamError(429, '', 'openai', { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }).headers).toEqual({});
  });

  it('gives an upstream 429 a code and keeps its retry-after-ms', () => {
    const error = mapUpstreamError(429, openAIError('slow down'), 'openai', { 'retry-after': '2', 'retry-after-ms': '1500' });
    expect(error.code).toBe('upstream_rate_limited');
    expect(error.headers).toEqual({ 'Retry-After': '2', 'retry-after-ms': '1500' });
    expect(mapUpstreamError(429, '', 'openai', { 'retry-after-ms': ['250.5'] }).headers).toEqual({ 'retry-after-ms': '250.5' });
    expect(mapUpstreamError(429, '', 'openai', { 'retry-after-ms': 'soon' }).headers).toEqual({});
  });

  it('describes an empty body by its status', () => {
    expect(mapUpstreamError(500, '', 'p').message).toBe('upstream p answered with status 500');
  });
});

describe('readErrorDetails', () => {
  it('reads the shapes providers use', () => {
    expect(readErrorDetails('{"error":"plain"}').message).toBe('plain');
    expect(readErrorDetails('{"message":"top"}').message).toBe('top');
    expect(readErrorDetails('Bad Gateway').message).toBe('Bad Gateway');
    expect(readErrorDetails('x'.repeat(5000)).message.length).toBeLessThan(2100);
  });
});

describe('content filter refusals', () => {
  it("keep Azure's content_filter code on a 400, with the upstream's message", () => {
    const body = JSON.stringify({
      error: {
        code: 'content_filter',
        message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
        status: 400,
        innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { hate: { filtered: true, severity: 'medium' } } },
      },
    });
    const error = mapUpstreamError(400, body, 'azure');
    expect([error.type, error.status, error.code]).toEqual(['invalid_request_error', 400, 'content_filter']);
    expect(error.message).toMatch(/content management policy/);
    expect(mapUpstreamError(400, '{"error":{"code":"other","message":"m"}}', 'azure').code).toBe('upstream_error');
  });
});

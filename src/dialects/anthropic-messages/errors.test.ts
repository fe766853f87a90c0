import { describe, expect, it } from 'vitest';
import { GatewayError, type ErrorType } from '../../errors/gateway-error.ts';
import { anthropicErrorType, isAnthropicDialectUrl, renderAnthropicError } from './errors.ts';

describe('anthropicErrorType', () => {
  it.each<[ErrorType, number, string]>([
    ['invalid_request_error', 400, 'invalid_request_error'],
    ['invalid_request_error', 413, 'request_too_large'],
    ['authentication_error', 401, 'authentication_error'],
    ['authentication_error', 403, 'permission_error'],
    ['permission_error', 403, 'permission_error'],
    ['not_found_error', 404, 'not_found_error'],
    ['rate_limit_error', 429, 'rate_limit_error'],
    ['provider_error', 502, 'api_error'],
    ['provider_error', 500, 'api_error'],
    ['provider_error', 504, 'api_error'],
    ['provider_error', 503, 'overloaded_error'],
    ['provider_error', 529, 'overloaded_error'],
    ['internal_error', 500, 'api_error'],
  ])('%s %d -> %s', (type, status, expected) => {
    expect(anthropicErrorType(new GatewayError(type, 'm', { status }))).toBe(expected);
  });
});

describe('renderAnthropicError', () => {
  it("is Anthropic's envelope with the gateway's message", () => {
    const error = new GatewayError('not_found_error', 'no such model', { code: 'model_not_found' });
    expect(renderAnthropicError(error)).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'no such model' } });
  });
});

describe('isAnthropicDialectUrl', () => {
  it('covers /v1/messages and the paths below it, query strings included', () => {
    expect(isAnthropicDialectUrl('/v1/messages')).toBe(true);
    expect(isAnthropicDialectUrl('/v1/messages?beta=true')).toBe(true);
    expect(isAnthropicDialectUrl('/v1/messages/count_tokens')).toBe(true);
    expect(isAnthropicDialectUrl('/v1/messagesx')).toBe(false);
    expect(isAnthropicDialectUrl('/v1/chat/completions')).toBe(false);
    expect(isAnthropicDialectUrl('/admin/messages')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';

import { isCredentialParameter, redactLogLine, redactUrl } from './redact-url.ts';

describe('redactUrl', () => {
  it('replaces the values of credential-like parameters and keeps the rest', () => {
    expect(redactUrl('/v1/chat/completions?api_key=sk-1&x=2')).toBe('/v1/chat/completions?api_key=[REDACTED]&x=2');
    expect(redactUrl('https://host/v1beta/models?key=AIza#frag')).toBe('https://host/v1beta/models?key=[REDACTED]#frag');
    expect(redactUrl('/a?token=t&access_token=u&X-Api-Key=v&client_secret=w&page=3')).toBe(
      '/a?token=[REDACTED]&access_token=[REDACTED]&X-Api-Key=[REDACTED]&client_secret=[REDACTED]&page=3',
    );
    expect(redactUrl('/a?api%5Fkey=s')).toBe('/a?api%5Fkey=[REDACTED]');
    expect(redactUrl('/plain')).toBe('/plain');
    expect(redactUrl('/a?limit=5&flag')).toBe('/a?limit=5&flag');
  });

  it('knows which names are credentials', () => {
    for (const name of ['api_key', 'apikey', 'key', 'token', 'access_token', 'x-api-key', 'password', 'auth', 'sig', 'Authorization'])
      expect(isCredentialParameter(name), name).toBe(true);
    for (const name of ['model', 'limit', 'after', 'user_path', 'stream']) expect(isCredentialParameter(name), name).toBe(false);
  });
});

describe('redactLogLine', () => {
  it('redacts URLs anywhere in a serialised line, escapes included', () => {
    const line = JSON.stringify({ url: '/v1/x?api_key=sk-"q&model=m', msg: 'GET https://u/v1?key=abc failed' });
    const redacted = redactLogLine(line);
    expect(redacted).not.toMatch(/sk-|abc/);
    expect(JSON.parse(redacted)).toEqual({ url: '/v1/x?api_key=[REDACTED]&model=m', msg: 'GET https://u/v1?key=[REDACTED] failed' });
  });

  it('leaves lines without query parameters alone', () => {
    const line = '{"msg":"request completed","url":"/v1/models"}';
    expect(redactLogLine(line)).toBe(line);
  });
});

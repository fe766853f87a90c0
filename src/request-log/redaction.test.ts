import { describe, expect, it } from 'vitest';
import { capBytes, keptBody, redacted, redactUrl, redactValue } from './redaction.ts';

describe('request log redaction', () => {
  it('replaces secret-named keys at any depth, keeps token counts and ordinary fields', () => {
    const body = {
      model: 'gpt-4o',
      max_tokens: 5,
      api_key: 'abc',
      nested: { Authorization: 'Bearer x', client_secret: 's', password: 'p', id_token: 't', 'x-api-key': 'k' },
      usage: { prompt_tokens: 3, total_tokens: 4 },
      list: [{ access_token: 'a' }],
    };
    expect(redactValue(body)).toEqual({
      model: 'gpt-4o',
      max_tokens: 5,
      api_key: redacted,
      nested: { Authorization: redacted, client_secret: redacted, password: redacted, id_token: redacted, 'x-api-key': redacted },
      usage: { prompt_tokens: 3, total_tokens: 4 },
      list: [{ access_token: redacted }],
    });
  });

  it('replaces bearer credentials and provider-style keys inside text', () => {
    const text = 'use Bearer abcdefghijklmnop and sk-proj-1234567890abcdefghij please';
    expect(redactValue(text)).toBe(`use Bearer ${redacted} and ${redacted} please`);
  });

  it('keeps JSON text as redacted JSON, other text by pattern, binary not at all', () => {
    expect(keptBody('{"password":"x","a":1}', 1000)).toBe(`{"password":"${redacted}","a":1}`);
    expect(keptBody('not json Bearer abcdefghijkl', 1000)).toBe(`not json Bearer ${redacted}`);
    expect(keptBody(Buffer.from([0xff, 0x00]), 1000)).toBeNull();
    expect(keptBody(Buffer.from(' {"token":"t"}'), 1000)).toBe(`{"token":"${redacted}"}`);
    expect(keptBody(undefined, 1000)).toBeNull();
  });

  it('caps bodies in UTF-8 bytes on a character boundary and says how much was cut', () => {
    expect(capBytes('abcdef', 10)).toBe('abcdef');
    expect(capBytes('abcdef', 4)).toBe('abcd…[truncated 2 bytes]');
    expect(capBytes('ééé', 3)).toBe('é…[truncated 4 bytes]');
  });

  it('redacts credential query parameters of a URL', () => {
    expect(redactUrl('/p/gemini/v1beta/models?key=AIzaSECRET&alt=sse')).toBe(`/p/gemini/v1beta/models?key=${redacted}&alt=sse`);
    expect(redactUrl('/x?api_key=1&access_token=2&page=3')).toBe(`/x?api_key=${redacted}&access_token=${redacted}&page=3`);
    expect(redactUrl('/plain')).toBe('/plain');
  });
});

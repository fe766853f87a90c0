import { describe, expect, it } from 'vitest';
import { modelOfBody, passthroughPath, queryOf, rawRestOf, unreportedUsage } from './passthrough.ts';

describe('passthroughPath', () => {
  it('keeps the path and query under the base URL', () => {
    expect(passthroughPath('chat/completions', '?a=1', 'https://api.openai.com/v1')).toBe('chat/completions?a=1');
    expect(passthroughPath('/models', '', 'http://127.0.0.1:8000')).toBe('models');
  });

  it('drops a leading v1 segment only when the base URL already ends in /v1', () => {
    expect(passthroughPath('v1/chat/completions', '', 'https://api.openai.com/v1')).toBe('chat/completions');
    expect(passthroughPath('v1', '', 'https://api.openai.com/v1/')).toBe('');
    expect(passthroughPath('v1beta/models', '', 'https://api.openai.com/v1')).toBe('v1beta/models');
    expect(passthroughPath('v1/models', '', 'https://generativelanguage.googleapis.com/v1beta/openai')).toBe('v1/models');
  });
});

describe('queryOf', () => {
  it('returns the query with its question mark, or nothing', () => {
    expect(queryOf('/p/openai/models?limit=2&x=%20')).toBe('?limit=2&x=%20');
    expect(queryOf('/p/openai/models')).toBe('');
  });
});

describe('modelOfBody', () => {
  const json = 'application/json; charset=utf-8';
  it('reads the model of a JSON object body', () => {
    expect(modelOfBody(Buffer.from('{"model":"gpt-4o","messages":[]}'), json)).toBe('gpt-4o');
    expect(modelOfBody(Buffer.from('{"model":"m"}'), 'application/vnd.api+json')).toBe('m');
  });

  it('ignores other content types, bad JSON, non-string models and empty bodies', () => {
    // Upstreams read JSON whatever the content type says.
    expect(modelOfBody(Buffer.from('\ufeff {"model":"gpt-4o"}'), 'text/plain')).toBe('gpt-4o');
    expect(modelOfBody(Buffer.from('model=gpt-4o'), 'text/plain')).toBeUndefined();
    expect(modelOfBody(Buffer.from('{"model":'), json)).toBeUndefined();
    expect(modelOfBody(Buffer.from('{"model":42}'), json)).toBeUndefined();
    expect(modelOfBody(Buffer.from('["model"]'), json)).toBeUndefined();
    expect(modelOfBody(undefined, json)).toBeUndefined();
    // Any size the server accepted is read: a large body is no unpriced model call.
    expect(modelOfBody(Buffer.from(`{"model":"m","pad":"${'x'.repeat(1024 * 1024)}"}`), json)).toBe('m');
  });
});

describe('passthroughPath: dot segments', () => {
  const base = 'https://proxy.example/tenant-a/v1';
  it('refuses a path that would climb out of the base URL, encoded or not', () => {
    for (const rest of ['../x', 'a/../../x', '%2e%2e/x', '.%2E/x', 'a/..%2f..%2fx', '%2E%2E%2F%2E%2E%2Fx', '..', './x', 'a\\..\\..\\x']) {
      expect(() => passthroughPath(rest, '', base), rest).toThrow(expect.objectContaining({ status: 400, code: 'invalid_path' }));
    }
  });

  it('keeps dots that are not whole segments and encoded separators as they came', () => {
    expect(passthroughPath('files/a..b/.well-known', '', base)).toBe('files/a..b/.well-known');
    expect(passthroughPath('things%3Fa=1/x%2Fy', '?q=1', base)).toBe('things%3Fa=1/x%2Fy?q=1');
  });
});

describe('rawRestOf', () => {
  it('is the path after /p/{instance}/ as sent, encoding kept, query excluded', () => {
    expect(rawRestOf('/p/openai/things%3Fa=1/x?y=2')).toBe('things%3Fa=1/x');
    expect(rawRestOf('/p/openai')).toBe('');
    expect(rawRestOf('/p/openai/')).toBe('');
    expect(rawRestOf('/p/openai/v1/models')).toBe('v1/models');
  });
});

describe('unreportedUsage', () => {
  it('charges the estimate, its output capped by the bytes relayed, marked as estimated', () => {
    expect(unreportedUsage({ promptTokens: 30, outputTokens: 4096 }, 700)).toEqual({
      prompt_tokens: 30,
      completion_tokens: 700,
      total_tokens: 730,
      estimated: true,
    });
    expect(unreportedUsage({ promptTokens: 30, outputTokens: 5 }, 700)).toMatchObject({ completion_tokens: 5, total_tokens: 35 });
    expect(unreportedUsage({ promptTokens: 30, outputTokens: 5 }, 0)).toMatchObject({ completion_tokens: 0, total_tokens: 30 });
  });
});

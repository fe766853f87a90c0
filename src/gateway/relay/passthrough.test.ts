import { describe, expect, it } from 'vitest';
import { modelOfBody, passthroughPath, queryOf } from './passthrough.ts';

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
    expect(modelOfBody(Buffer.from('{"model":"gpt-4o"}'), 'text/plain')).toBeUndefined();
    expect(modelOfBody(Buffer.from('{"model":'), json)).toBeUndefined();
    expect(modelOfBody(Buffer.from('{"model":42}'), json)).toBeUndefined();
    expect(modelOfBody(Buffer.from('["model"]'), json)).toBeUndefined();
    expect(modelOfBody(undefined, json)).toBeUndefined();
    expect(modelOfBody(Buffer.from(`{"model":"m","pad":"${'x'.repeat(1024 * 1024)}"}`), json)).toBeUndefined();
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeBaseOf } from './adapter.ts';
import { parseGeminiModelPage } from './parse-model-page.ts';

const fixtures = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'gemini');
const fixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

describe('parseGeminiModelPage', () => {
  it('translates a native listing page (golden fixture): bare ids, chat and embedding models only', () => {
    const expected: unknown = JSON.parse(fixture('models-page.expected.json'));
    expect(parseGeminiModelPage(fixture('models-page.json'))).toEqual(expected);
  });

  it('reads the last page (no token) and an empty listing', () => {
    expect(parseGeminiModelPage('{"models":[{"name":"models/gemini-2.0-flash-lite"}]}')).toEqual({
      models: [{ id: 'gemini-2.0-flash-lite' }],
      nextPageToken: null,
    });
    expect(parseGeminiModelPage('{}')).toEqual({ models: [], nextPageToken: null });
  });

  it('refuses bodies that are not a listing', () => {
    expect(parseGeminiModelPage('not json')).toBeNull();
    expect(parseGeminiModelPage('[]')).toBeNull();
    expect(parseGeminiModelPage('{"models":{}}')).toBeNull();
  });
});

describe('nativeBaseOf', () => {
  it('strips the OpenAI-compatible suffix, and gives null for other base URLs', () => {
    expect(nativeBaseOf('https://generativelanguage.googleapis.com/v1beta/openai')).toBe(
      'https://generativelanguage.googleapis.com/v1beta',
    );
    expect(nativeBaseOf('http://127.0.0.1:9000/v1beta/openai/')).toBe('http://127.0.0.1:9000/v1beta');
    expect(nativeBaseOf('https://proxy.example/v1')).toBeNull();
  });
});

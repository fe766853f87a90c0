import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromBatchEmbedResponse, toBatchEmbedRequest } from './convert-embeddings.ts';
import { googleErrorStatus } from './google-errors.ts';

const fixtureText = (name: string): string => readFileSync(new URL(`../../../test/fixtures/gemini/${name}`, import.meta.url), 'utf8');

describe('Gemini embeddings', () => {
  it('sends one batchEmbedContents request per input', () => {
    const body = {
      model: 'gemini-embedding-001',
      input: ['What is the meaning of life?', 'How much wood would a woodchuck chuck?'],
      dimensions: 3,
    };
    expect(toBatchEmbedRequest(body, 'gemini-embedding-001')).toEqual(JSON.parse(fixtureText('batch-embed-request.expected.json')));
    expect(toBatchEmbedRequest({ input: 'x', task_type: 'RETRIEVAL_QUERY' }, 'models/e')).toEqual({
      requests: [{ model: 'models/e', content: { parts: [{ text: 'x' }] }, taskType: 'RETRIEVAL_QUERY' }],
    });
    expect(() => toBatchEmbedRequest({ input: [1, 2, 3] }, 'e')).toThrow(/array of strings/);
  });

  it("answers OpenAI's list from the embeddings", () => {
    expect(fromBatchEmbedResponse(fixtureText('batch-embed-response.json'), 'gemini-embedding-001', 'gemini')).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.0132, -0.0087, 0.0421] },
        { object: 'embedding', index: 1, embedding: [-0.0254, 0.0311, 0.0078] },
      ],
      model: 'gemini-embedding-001',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
    expect(() => fromBatchEmbedResponse('{"data":[]}', 'e', 'gemini')).toThrow(/batchEmbedContents/);
  });
});

describe('googleErrorStatus', () => {
  it('reports an invalid API key (400 API_KEY_INVALID) as 401 and keeps other statuses', () => {
    expect(googleErrorStatus(400, fixtureText('error-api-key.json'))).toBe(401);
    expect(googleErrorStatus(429, fixtureText('error-429.json'))).toBe(429);
    expect(googleErrorStatus(400, '{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}')).toBe(400);
    expect(googleErrorStatus(400, 'not json')).toBe(400);
  });
});

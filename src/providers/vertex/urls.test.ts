import { describe, expect, it } from 'vitest';
import { toRawPredictBody, vertexMessagesHeaders } from './claude.ts';
import { claudeUrl, geminiUrl, modelUrl, publisherOf, vertexOrigin } from './urls.ts';

const where = { project: 'my-project', location: 'us-east5', origin: vertexOrigin('us-east5') };

describe('Vertex URLs and the Claude body', () => {
  it('builds regional and global endpoints', () => {
    expect(vertexOrigin('europe-west4')).toBe('https://europe-west4-aiplatform.googleapis.com');
    expect(vertexOrigin('global')).toBe('https://aiplatform.googleapis.com');
    expect(geminiUrl(where, 'gemini-2.5-flash', false).href).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(geminiUrl(where, 'gemini-2.5-flash', true).href).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(claudeUrl(where, 'claude-sonnet-4-5@20250929', true).href).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict',
    );
    expect(modelUrl({ ...where, origin: 'http://127.0.0.1:9/proxy/' }, 'google', 'text-embedding-005', 'predict').href).toBe(
      'http://127.0.0.1:9/proxy/v1/projects/my-project/locations/us-east5/publishers/google/models/text-embedding-005:predict',
    );
  });

  it('sends claude* models to the anthropic publisher', () => {
    expect(publisherOf('claude-haiku-4-5@20251001')).toBe('anthropic');
    expect(publisherOf('gemini-2.5-pro')).toBe('google');
  });

  it('moves the version into the body and drops model and the version header', () => {
    expect(toRawPredictBody({ model: 'claude-x', max_tokens: 5, messages: [] })).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 5,
      messages: [],
    });
    expect(vertexMessagesHeaders({ body: {}, headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'x' } })).toEqual({
      'anthropic-beta': 'x',
    });
  });
});

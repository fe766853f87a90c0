import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatRequestBody } from '../provider.ts';
import { fromPredictResponse, toPredictRequest } from './convert-embeddings.ts';

const fixture = JSON.parse(readFileSync(new URL('../../../test/fixtures/vertex/predict.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;

describe('Vertex embeddings through predict', () => {
  it('builds the predict body and reads its answer as OpenAI embeddings', () => {
    expect(toPredictRequest(fixture['openai'] as ChatRequestBody, 'vx')).toEqual(fixture['request']);
    expect(fromPredictResponse(JSON.stringify(fixture['response']), 'text-embedding-005', 'vx')).toEqual(fixture['expected']);
  });

  it('sends an extra task_type on every instance', () => {
    const request = { model: 'text-embedding-005', input: ['a', 'b'], task_type: 'RETRIEVAL_QUERY' };
    expect(toPredictRequest(request, 'vx')).toEqual({
      instances: [
        { content: 'a', task_type: 'RETRIEVAL_QUERY' },
        { content: 'b', task_type: 'RETRIEVAL_QUERY' },
      ],
    });
  });

  it('refuses token-array inputs and unreadable answers', () => {
    expect(() => toPredictRequest({ model: 'm', input: [[1, 2, 3]] }, 'vx')).toThrow(/string/);
    expect(() => fromPredictResponse('{"nope":1}', 'm', 'vx')).toThrow(/unreadable/);
  });
});

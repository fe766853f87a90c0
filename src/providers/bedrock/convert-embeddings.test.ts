import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  cohereRequest,
  embeddingFamilyOf,
  embeddingInputs,
  embeddingsAnswer,
  readCohereResponse,
  readTitanResponse,
  titanRequest,
} from './convert-embeddings.ts';

const fixture = (name: string): string => readFileSync(new URL(`../../../test/fixtures/bedrock/${name}`, import.meta.url), 'utf8');

describe('embeddings conversion', () => {
  it('recognises Titan and Cohere model ids', () => {
    expect(embeddingFamilyOf('amazon.titan-embed-text-v2:0')).toBe('titan');
    expect(embeddingFamilyOf('cohere.embed-english-v3')).toBe('cohere');
    expect(embeddingFamilyOf('us.cohere.embed-v4:0')).toBe('cohere');
    expect(embeddingFamilyOf('anthropic.claude-3-haiku-20240307-v1:0')).toBeNull();
  });

  it('builds the InvokeModel bodies', () => {
    const body = { model: 'm', input: ['a', 'b'], dimensions: 512, input_type: 'search_query' };
    expect(embeddingInputs(body, 'aws')).toEqual(['a', 'b']);
    expect(titanRequest('a', body)).toEqual({ inputText: 'a', dimensions: 512 });
    expect(cohereRequest(['a', 'b'], body)).toEqual({ texts: ['a', 'b'], input_type: 'search_query' });
    expect(cohereRequest(['a'], { model: 'm' })).toEqual({ texts: ['a'], input_type: 'search_document' });
    expect(() => embeddingInputs({ model: 'm', input: [[1, 2]] }, 'aws')).toThrow(/token arrays/);
  });

  it('reads Titan and Cohere answers into OpenAI shape', () => {
    const titan = readTitanResponse(fixture('invoke-titan-embed-text-v2.json'), 'aws');
    expect(titan).toEqual({ embedding: [0.017, -0.052, 0.031, 0.009], tokens: 6 });
    const cohere = readCohereResponse(fixture('invoke-cohere-embed.json'), 'aws');
    expect(cohere).toHaveLength(2);
    expect(readCohereResponse('{"embeddings":{"float":[[1,2]]}}', 'aws')).toEqual([[1, 2]]);
    expect(embeddingsAnswer('cohere.embed-english-v3', cohere, 4)).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.041, -0.012, 0.5] },
        { object: 'embedding', index: 1, embedding: [-0.3, 0.22, 0.01] },
      ],
      model: 'cohere.embed-english-v3',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    expect(() => readTitanResponse('{"embeddings":[]}', 'aws')).toThrow(/unreadable/);
  });
});

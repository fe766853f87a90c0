import { describe, expect, it } from 'vitest';
import { modelIdOf } from './model-lookup.ts';

describe('modelIdOf', () => {
  it('reads the id after the prefix, raw or percent-encoded, without the query', () => {
    expect(modelIdOf('/v1/models/gpt-4o', '/v1/models/')).toBe('gpt-4o');
    expect(modelIdOf('/v1/models/openai/gpt-4o', '/v1/models/')).toBe('openai/gpt-4o');
    expect(modelIdOf('/v1/models/openai%2Fgpt-4o?x=1', '/v1/models/')).toBe('openai/gpt-4o');
    expect(modelIdOf('/v1/models/', '/v1/models/')).toBe('');
  });

  it('keeps an id that is not valid percent-encoding as it was sent', () => {
    expect(modelIdOf('/v1/models/50%-off', '/v1/models/')).toBe('50%-off');
  });
});

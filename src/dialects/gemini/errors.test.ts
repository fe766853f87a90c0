import { describe, expect, it } from 'vitest';
import { invalidRequest, providerError } from '../../errors/gateway-error.ts';
import { googleStatusOf, isGeminiDialectUrl, renderGoogleError } from './errors.ts';
import { modelMethodOf } from './model-path.ts';

describe("Google's error envelope", () => {
  it('renders the status, message and canonical status name, with the gateway code as ErrorInfo reason', () => {
    const error = providerError('upstream openai answered 429: slow down', { status: 429, code: 'upstream_error', provider: 'openai' });
    expect(renderGoogleError(error)).toEqual({
      error: {
        code: 429,
        message: 'upstream openai answered 429: slow down',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'upstream_error',
            domain: 'model-gateway',
            metadata: { provider: 'openai' },
          },
        ],
      },
    });
    expect(renderGoogleError(invalidRequest('bad')).error.status).toBe('INVALID_ARGUMENT');
  });

  it('maps HTTP statuses to google.rpc.Code names', () => {
    const statuses = [400, 401, 403, 404, 413, 429, 499, 500, 502, 503, 504];
    expect(statuses.map(googleStatusOf)).toEqual([
      'INVALID_ARGUMENT',
      'UNAUTHENTICATED',
      'PERMISSION_DENIED',
      'NOT_FOUND',
      'INVALID_ARGUMENT',
      'RESOURCE_EXHAUSTED',
      'CANCELLED',
      'INTERNAL',
      'INTERNAL',
      'UNAVAILABLE',
      'DEADLINE_EXCEEDED',
    ]);
  });
});

describe('Gemini dialect URLs', () => {
  it('reads the model selector raw or percent-encoded, and the method', () => {
    expect(modelMethodOf('/v1beta/models/openai/gpt-4o:generateContent')).toEqual({ model: 'openai/gpt-4o', method: 'generateContent' });
    expect(modelMethodOf('/v1beta/models/openai%2Fgpt-4o:streamGenerateContent?alt=sse')).toEqual({
      model: 'openai/gpt-4o',
      method: 'streamGenerateContent',
    });
    expect(modelMethodOf('/v1/models/fast:embedContent')).toEqual({ model: 'fast', method: 'embedContent' });
    expect(modelMethodOf('/v1beta/models/gpt-4o:predict')).toBeNull();
    expect(modelMethodOf('/v1beta/models/gpt-4o')).toBeNull();
  });

  it('claims /v1beta and model methods under /v1/models, not model ids with a colon', () => {
    expect(isGeminiDialectUrl('/v1beta/anything')).toBe(true);
    expect(isGeminiDialectUrl('/v1/models/gpt-4o:generateContent?key=k')).toBe(true);
    expect(isGeminiDialectUrl('/v1/models/ollama/llama3:8b')).toBe(false);
    expect(isGeminiDialectUrl('/v1/chat/completions')).toBe(false);
  });
});

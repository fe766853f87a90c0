import { describe, expect, it } from 'vitest';
import { passthroughModels, type PassthroughModelRequest } from './passthrough-models.ts';

const json = 'application/json';
const post = (rest: string, body?: unknown, extra: Partial<PassthroughModelRequest> = {}): PassthroughModelRequest => ({
  method: 'POST',
  rest,
  body: body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  contentType: json,
  ...extra,
});

describe('passthroughModels', () => {
  it('reads the model of Gemini and Vertex model methods from the path, and the body model as well', () => {
    for (const method of ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents', 'predict']) {
      expect(passthroughModels(post(`models/gemini-pro:${method}`, {})).checked).toEqual(['gemini-pro']);
    }
    expect(passthroughModels(post('models/gemini-pro:generateContent', { model: 'gemini-flash' }))).toEqual({
      checked: ['gemini-pro', 'gemini-flash'],
      executed: 'gemini-pro',
    });
    expect(passthroughModels(post('v1beta/models/gemini-pro:generateContent')).checked).toEqual(['gemini-pro']);
    expect(passthroughModels(post('models/gemini%2Dpro%3AgenerateContent')).checked).toEqual(['gemini-pro']);
    const vertex = 'v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.0-flash:streamGenerateContent';
    expect(passthroughModels(post(vertex)).checked).toEqual(['gemini-2.0-flash']);
  });

  it('reads Bedrock model ids (ARNs too) and Azure deployments from the path', () => {
    for (const operation of ['invoke', 'invoke-with-response-stream', 'converse', 'converse-stream']) {
      expect(passthroughModels(post(`model/anthropic.claude-v2/${operation}`, {})).checked).toEqual(['anthropic.claude-v2']);
    }
    const arn = encodeURIComponent('arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2');
    expect(passthroughModels(post(`model/${arn}/converse`)).checked).toEqual([decodeURIComponent(arn)]);
    expect(passthroughModels(post('openai/deployments/prod/chat/completions', { model: 'gpt-4o' })).checked).toEqual(['prod', 'gpt-4o']);
    const deploymentModels = (name: string) => (name === 'prod' ? ['gpt-4o'] : null);
    expect(passthroughModels(post('deployments/prod/chat/completions', undefined, { deploymentModels })).checked).toEqual(['gpt-4o']);
    expect(passthroughModels(post('deployments/other/chat/completions', undefined, { deploymentModels })).checked).toBeNull();
  });

  it('reads the body model of OpenAI-style model calls (JSON or form), whatever the content type says', () => {
    expect(passthroughModels(post('v1/chat/completions', { model: 'gpt-4o' })).checked).toEqual(['gpt-4o']);
    expect(passthroughModels(post('messages', { model: 'claude' }, { contentType: 'text/plain' })).checked).toEqual(['claude']);
    const form = '--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--b--\r\n';
    const multipart = post('audio/transcriptions', form, { contentType: 'multipart/form-data; boundary=b' });
    expect(passthroughModels(multipart).checked).toEqual(['whisper-1']);
  });

  it('cannot tell (null) for model calls without a readable model, other custom methods and collections', () => {
    expect(passthroughModels(post('chat/completions', {})).checked).toBeNull();
    expect(passthroughModels(post('chat/completions', '{"model":')).checked).toBeNull();
    expect(passthroughModels(post('chat/completions', { model: 42 })).checked).toBeNull();
    expect(passthroughModels(post('tunedModels/mine:generateContent', { model: 'gemini-flash' })).checked).toBeNull();
    expect(passthroughModels(post('endpoints/123:predict', { model: 'gemini-flash' })).checked).toBeNull();
    expect(passthroughModels(post('models%2Fgemini-pro:generateContent')).checked).toBeNull();
    expect(passthroughModels(post('fine_tuning/jobs', { model: 'gpt-4o' })).checked).toBeNull();
    expect(passthroughModels(post('Chat/Completions', { model: 'gpt-4o' })).checked).toBeNull();
    expect(passthroughModels({ ...post('chat/completions', { model: 'gpt-4o' }), method: 'GET' }).checked).toBeNull();
    expect(passthroughModels(post('models/%E0%A4%A:generateContent')).checked).toBeNull();
  });
});

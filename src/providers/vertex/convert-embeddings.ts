import { isJsonObject as isRecord } from '../../core/json.ts';
import { invalidRequest, providerError } from '../../errors/gateway-error.ts';
import type { ChatRequestBody } from '../provider.ts';

/**
 * OpenAI's embeddings request as Vertex's `:predict` body: one instance per input text
 * (`{content}`, with an extra `task_type` such as `RETRIEVAL_QUERY` as on `gemini`
 * instances), `dimensions` as `parameters.outputDimensionality`. Token-array inputs have no
 * Vertex equivalent and are refused.
 */
export function toPredictRequest(request: ChatRequestBody, provider: string): Record<string, unknown> {
  const input = request['input'];
  const texts =
    typeof input === 'string' ? [input] : Array.isArray(input) && input.every((item) => typeof item === 'string') ? input : null;
  if (texts === null || texts.length === 0) {
    throw invalidRequest(`provider ${provider} takes input as a string or an array of strings`, {
      param: 'input',
      code: 'unsupported_parameter',
    });
  }
  const taskType = typeof request['task_type'] === 'string' ? { task_type: request['task_type'] } : {};
  const body: Record<string, unknown> = { instances: texts.map((content) => ({ content, ...taskType })) };
  if (typeof request['dimensions'] === 'number') body['parameters'] = { outputDimensionality: request['dimensions'] };
  return body;
}

/** `{predictions: [{embeddings: {values, statistics: {token_count}}}]}` as OpenAI's list answer. */
export function fromPredictResponse(text: string, model: string, provider: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const predictions = isRecord(parsed) && Array.isArray(parsed['predictions']) ? parsed['predictions'] : null;
  if (predictions === null) {
    throw providerError(`upstream ${provider} returned an unreadable embeddings answer`, { provider, code: 'invalid_upstream_response' });
  }
  let tokens = 0;
  const data = predictions.map((prediction, index) => {
    const embeddings = isRecord(prediction) && isRecord(prediction['embeddings']) ? prediction['embeddings'] : {};
    const statistics = isRecord(embeddings['statistics']) ? embeddings['statistics'] : {};
    if (typeof statistics['token_count'] === 'number') tokens += statistics['token_count'];
    return { object: 'embedding', index, embedding: Array.isArray(embeddings['values']) ? embeddings['values'] : [] };
  });
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

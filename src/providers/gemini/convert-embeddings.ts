import { invalidRequest, providerError } from '../../errors/gateway-error.ts';
import { isRecord, text, type Json } from './wire.ts';

/**
 * An OpenAI embeddings request as `batchEmbedContents`: one request per input string, the
 * model as `models/{model}`, `dimensions` as `outputDimensionality`, an extra `task_type`
 * (e.g. `RETRIEVAL_QUERY`) as `taskType`. Token-array inputs are refused (Gemini takes text).
 */
export function toBatchEmbedRequest(body: Json, model: string): Json {
  const input = body['input'];
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : null;
  if (texts === null || texts.length === 0 || !texts.every((item) => typeof item === 'string')) {
    throw invalidRequest('input must be a string or an array of strings for Gemini embeddings', { param: 'input', code: 'invalid_body' });
  }
  const dimensions = typeof body['dimensions'] === 'number' ? body['dimensions'] : undefined;
  const taskType = text(body['task_type']);
  const name = model.startsWith('models/') ? model : `models/${model}`;
  return {
    requests: texts.map((item) => ({
      model: name,
      content: { parts: [{ text: item }] },
      ...(dimensions === undefined ? {} : { outputDimensionality: dimensions }),
      ...(taskType === undefined ? {} : { taskType }),
    })),
  };
}

/**
 * `{embeddings: [{values}]}` as OpenAI's list. Gemini reports no token counts for
 * embeddings, so usage is 0 (the request is still recorded).
 */
export function fromBatchEmbedResponse(body: string, model: string, provider: string): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const embeddings = isRecord(parsed) && Array.isArray(parsed['embeddings']) ? parsed['embeddings'] : null;
  if (embeddings === null || !embeddings.every((item) => isRecord(item) && Array.isArray(item['values']))) {
    throw providerError(`upstream ${provider} returned a body that is not a batchEmbedContents answer`, {
      provider,
      code: 'invalid_upstream_response',
    });
  }
  return {
    object: 'list',
    data: embeddings.map((item, index) => ({ object: 'embedding', index, embedding: (item as Json)['values'] })),
    model,
    usage: { prompt_tokens: 0, total_tokens: 0 },
  };
}

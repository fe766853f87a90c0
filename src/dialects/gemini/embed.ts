import { invalid, isObject, type JsonObject } from './wire.ts';

/**
 * `embedContent` / `batchEmbedContents` as an OpenAI embeddings request and back. Each
 * request's content is embedded as the text of its parts; `outputDimensionality` is
 * OpenAI's `dimensions`, `taskType` and `title` have no equivalent and are dropped.
 */
export function toEmbeddingsRequest(body: unknown, selector: string, batch: boolean): JsonObject {
  if (!isObject(body)) throw invalid('request body must be a JSON object');
  const requests = batch ? body['requests'] : [body];
  if (!Array.isArray(requests) || requests.length === 0) throw invalid('requests: must be a non-empty array', 'requests');
  const input = requests.map((request: unknown, index) => textOf(request, batch ? `requests[${index}]` : ''));
  const first: unknown = requests[0];
  const dimensions = isObject(first) ? (first['outputDimensionality'] ?? first['output_dimensionality']) : undefined;
  return { model: selector, input, encoding_format: 'float', ...(typeof dimensions === 'number' ? { dimensions } : {}) };
}

function textOf(request: unknown, path: string): string {
  const at = path === '' ? 'content' : `${path}.content`;
  const content = isObject(request) ? request['content'] : undefined;
  const parts = isObject(content) ? content['parts'] : undefined;
  if (!Array.isArray(parts)) throw invalid(`${at}: must be a Content with parts`, 'content');
  return parts
    .map((part: unknown, index) => {
      const text = isObject(part) ? part['text'] : undefined;
      if (typeof text !== 'string') throw invalid(`${at}.parts[${index}]: only text parts can be embedded`, 'content');
      return text;
    })
    .join('\n');
}

/** OpenAI's `data[].embedding` as `{"embedding":{"values"}}` or `{"embeddings":[...]}`. */
export function toEmbedResponse(answer: string, batch: boolean): JsonObject {
  const parsed: unknown = JSON.parse(answer);
  const data = isObject(parsed) && Array.isArray(parsed['data']) ? (parsed['data'] as unknown[]) : [];
  const embeddings = data
    .filter(isObject)
    .sort((a, b) => Number(a['index'] ?? 0) - Number(b['index'] ?? 0))
    .map((item) => ({ values: Array.isArray(item['embedding']) ? item['embedding'] : [] }));
  return batch ? { embeddings } : { embedding: embeddings[0] ?? { values: [] } };
}

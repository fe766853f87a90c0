import { providerError } from '../../errors/gateway-error.ts';
import type { ChatRequestBody } from '../provider.ts';
import { malformed, unsupported } from './convert-content.ts';
import { isRecord, type JsonObject } from './wire.ts';

/** The InvokeModel body formats of Bedrock's embedding models the gateway speaks. */
export type EmbeddingFamily = 'titan' | 'cohere';

/** Titan (`amazon.titan-embed-*`) or Cohere (`cohere.embed-*`), cross-region prefixes allowed. */
export function embeddingFamilyOf(model: string): EmbeddingFamily | null {
  if (/(^|\.)amazon\.titan-embed-/.test(model)) return 'titan';
  if (/(^|\.)cohere\.embed-/.test(model)) return 'cohere';
  return null;
}

/** OpenAI's `input` (a string or an array of strings) as the texts to embed. */
export function embeddingInputs(body: ChatRequestBody, provider: string): string[] {
  const input = body['input'];
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === 'string')) return input as string[];
  if (Array.isArray(input) && input.length > 0) throw unsupported('token arrays as input', 'input', provider);
  throw malformed('input must be a string or a non-empty array of strings', 'input');
}

/** Titan takes one text per call: `{inputText, dimensions?, normalize}`. */
export function titanRequest(text: string, body: ChatRequestBody): JsonObject {
  const request: JsonObject = { inputText: text };
  if (typeof body['dimensions'] === 'number') request['dimensions'] = body['dimensions'];
  if (typeof body['normalize'] === 'boolean') request['normalize'] = body['normalize'];
  return request;
}

/** Cohere takes a batch: `{texts, input_type}`; `input_type` defaults to `search_document`. */
export function cohereRequest(texts: string[], body: ChatRequestBody): JsonObject {
  const request: JsonObject = { texts, input_type: typeof body['input_type'] === 'string' ? body['input_type'] : 'search_document' };
  if (typeof body['truncate'] === 'string') request['truncate'] = body['truncate'];
  return request;
}

function parse(text: string, provider: string): JsonObject {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw unreadable(provider);
}

function unreadable(provider: string): Error {
  return providerError(`upstream ${provider} returned an unreadable embeddings answer`, { provider, code: 'invalid_upstream_response' });
}

const isVector = (value: unknown): value is number[] => Array.isArray(value) && value.every((item) => typeof item === 'number');

/** Titan's `{embedding, inputTextTokenCount}`. */
export function readTitanResponse(text: string, provider: string): { embedding: number[]; tokens: number } {
  const parsed = parse(text, provider);
  if (!isVector(parsed['embedding'])) throw unreadable(provider);
  const tokens = parsed['inputTextTokenCount'];
  return { embedding: parsed['embedding'], tokens: typeof tokens === 'number' ? tokens : 0 };
}

/** Cohere's `{embeddings: [[...]]}`, or `{embeddings: {float: [[...]]}}` when typed embeddings were asked for. */
export function readCohereResponse(text: string, provider: string): number[][] {
  const parsed = parse(text, provider);
  const embeddings = parsed['embeddings'];
  const vectors = isRecord(embeddings) ? embeddings['float'] : embeddings;
  if (!Array.isArray(vectors) || !vectors.every(isVector)) throw unreadable(provider);
  return vectors;
}

/** OpenAI's embeddings answer. */
export function embeddingsAnswer(model: string, vectors: readonly number[][], promptTokens: number): JsonObject {
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

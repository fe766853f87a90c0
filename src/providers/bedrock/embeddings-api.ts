import type { CallContext, ChatRequestBody, EmbeddingsApi } from '../provider.ts';
import { readBody } from '../upstream-body.ts';
import { bedrockErrorOf } from './errors.ts';
import { unsupported } from './convert-content.ts';
import {
  cohereRequest,
  embeddingFamilyOf,
  embeddingInputs,
  embeddingsAnswer,
  readCohereResponse,
  readTitanResponse,
  titanRequest,
} from './convert-embeddings.ts';
import type { BedrockTransport } from './transport.ts';
import type { JsonObject } from './wire.ts';

const jsonHeaders = { 'content-type': 'application/json', accept: 'application/json' };

/**
 * OpenAI's embeddings through InvokeModel (`POST /model/{id}/invoke`): Titan one text per
 * call (in order), Cohere the whole batch in one call (its token count from the
 * `x-amzn-bedrock-input-token-count` header).
 */
export function createEmbeddingsApi(transport: BedrockTransport): EmbeddingsApi {
  return {
    async create(request: ChatRequestBody, context: CallContext): Promise<string> {
      const family = embeddingFamilyOf(request.model);
      const provider = transport.provider;
      if (family === null) throw unsupported(`embeddings with model ${request.model} (Titan and Cohere only)`, 'model', provider);
      const texts = embeddingInputs(request, provider);
      if (family === 'cohere') {
        const { text, tokens } = await invoke(transport, request.model, cohereRequest(texts, request), context.signal);
        return JSON.stringify(embeddingsAnswer(request.model, readCohereResponse(text, provider), tokens));
      }
      const vectors: number[][] = [];
      let tokens = 0;
      for (const input of texts) {
        const { text } = await invoke(transport, request.model, titanRequest(input, request), context.signal);
        const answer = readTitanResponse(text, provider);
        vectors.push(answer.embedding);
        tokens += answer.tokens;
      }
      return JSON.stringify(embeddingsAnswer(request.model, vectors, tokens));
    },
  };
}

async function invoke(
  transport: BedrockTransport,
  model: string,
  body: JsonObject,
  signal: AbortSignal,
): Promise<{ text: string; tokens: number }> {
  const response = await transport.send({
    method: 'POST',
    url: transport.modelUrl(model, 'invoke'),
    headers: jsonHeaders,
    body: JSON.stringify(body),
    signal,
  });
  if (response.statusCode < 200 || response.statusCode > 299) throw await bedrockErrorOf(response, transport.provider);
  const count = Number(response.headers['x-amzn-bedrock-input-token-count']);
  return { text: await readBody(response, transport.provider, signal), tokens: Number.isFinite(count) ? count : 0 };
}

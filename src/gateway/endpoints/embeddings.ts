import { invalidRequest } from '../../errors/gateway-error.ts';
import { readBody, upstreamErrorOf } from '../../providers/upstream-body.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { readJsonAnswer, type JsonAnswer } from '../json-answer.ts';
import { readModelFields, upstreamBodyOf, type ModelFields } from '../model-fields.ts';
import { callCodec, jsonAnswer, runCall, type ExecutedOutcome } from './call-codec.ts';
import type { RequestContext } from '../request-context.ts';

const embeddingsCodec = callCodec<JsonAnswer>('/v1/embeddings', jsonAnswer);
const jsonHeaders = { 'content-type': 'application/json', accept: 'application/json' };

/**
 * `POST /v1/embeddings`: routed like chat (instance/model, bare id or virtual model) under
 * rate limits, budgets, retries and failover; the body goes upstream with the target's bare
 * model id and without the `provider` hint; the answer comes back with `provider` stamped,
 * and its usage is recorded as it returns.
 */
export async function runEmbeddings(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<JsonAnswer>> {
  const request = readModelFields(body);
  if (request.body['input'] === undefined || request.body['input'] === null) {
    throw invalidRequest('you must provide an input parameter', { code: 'missing_field', param: 'input' });
  }
  return runCall(
    embeddingsCodec,
    {
      selector: request.selector,
      hint: request.hint,
      stream: false,
      body: request.body,
      call: (target) => embed(target, request, context),
    },
    context,
    dependencies,
  );
}

async function embed(target: ResolvedTarget, request: ModelFields, context: RequestContext): Promise<JsonAnswer> {
  const provider = target.adapter.name;
  const native = target.adapter.embeddingsApi;
  if (native !== undefined) {
    const text = await native.create(
      { ...upstreamBodyOf(request.body, target.model), model: target.model },
      { signal: context.signal, requestId: context.requestId },
    );
    const answer = readJsonAnswer(text, provider, 'data');
    return request.body['encoding_format'] === 'base64' ? asBase64(answer, provider) : answer;
  }
  const response = await target.adapter.forward(
    {
      method: 'POST',
      path: 'embeddings',
      headers: jsonHeaders,
      body: JSON.stringify(upstreamBodyOf(request.body, target.model)),
      model: target.model,
    },
    { signal: context.signal, requestId: context.requestId },
  );
  if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, provider);
  const answer = readJsonAnswer(await readBody(response, provider, context.signal), provider, 'data');
  return request.body['encoding_format'] === 'base64' ? asBase64(answer, provider) : answer;
}

/**
 * The answer with float-array embeddings encoded as base64 (little-endian float32, as OpenAI
 * sends them), for a client that asked for base64: the official client always does, and
 * decodes what it gets, while many OpenAI-compatible servers ignore `encoding_format`.
 */
function asBase64(answer: JsonAnswer, provider: string): JsonAnswer {
  const data = answer.parsed['data'] as unknown[];
  const isFloats = (item: unknown): item is { embedding: unknown[] } =>
    typeof item === 'object' && item !== null && Array.isArray((item as Record<string, unknown>)['embedding']);
  if (!data.some(isFloats)) return answer;
  const encoded = data.map((item) =>
    isFloats(item) ? { ...item, embedding: Buffer.from(new Float32Array(item.embedding.map(Number)).buffer).toString('base64') } : item,
  );
  return { ...answer, body: JSON.stringify({ ...answer.parsed, data: encoded, provider }) };
}

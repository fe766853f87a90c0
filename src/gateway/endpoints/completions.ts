import type { Readable } from 'node:stream';
import { isJsonObject } from '../../core/json.ts';
import { invalidRequest } from '../../errors/gateway-error.ts';
import { readBody } from '../../providers/upstream-body.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { ChunkOptions } from '../../streaming/chat-chunk.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { buildUpstreamBody, type ChatRequest } from '../chat-request.ts';
import { readJsonAnswer, type JsonAnswer } from '../json-answer.ts';
import { callCodec, jsonAnswer, runCall, type ExecutedOutcome } from './call-codec.ts';
import { readModelFields, readStreamFlag, upstreamBodyOf } from '../model-fields.ts';
import { defaultModelPlan, forwardToTarget, readHint, servesRelays } from '../relay/model-relay.ts';
import type { RequestContext } from '../request-context.ts';

/** A legacy completion: the checked JSON answer, or the upstream's SSE for the chat stream relay. */
export type CompletionResult = { kind: 'json'; answer: JsonAnswer } | { kind: 'stream'; body: Readable; chunkOptions: ChunkOptions };

const json = 'application/json';
const completionsCodec = callCodec<CompletionResult>(
  '/v1/completions',
  (result) => (result.kind === 'json' ? result.answer : null),
  servesRelays,
);
const moderationsCodec = callCodec<JsonAnswer>('/v1/moderations', jsonAnswer, servesRelays);

/**
 * `POST /v1/completions` (OpenAI's legacy text completions): routed by `model` like chat
 * (instance/model, bare id or virtual model, with failover) under rate limits and budgets,
 * relayed to an OpenAI-wire instance. A stream asks the upstream for its usage, which the
 * client sees only if it asked (`stream_options.include_usage`), like chat.
 */
export async function runCompletion(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<CompletionResult>> {
  const request = readCompletionRequest(body);
  return runCall(
    completionsCodec,
    {
      selector: request.selector,
      hint: request.hint,
      stream: request.stream,
      body: request.body,
      call: (target) => complete(target, request, context),
    },
    context,
    dependencies,
  );
}

function readCompletionRequest(body: unknown): ChatRequest {
  const request = readModelFields(body);
  const prompt = request.body['prompt'];
  if (prompt === undefined || prompt === null) {
    throw invalidRequest('you must provide a prompt parameter', { code: 'missing_field', param: 'prompt' });
  }
  const streamOptions = request.body['stream_options'];
  if (streamOptions !== undefined && streamOptions !== null && !isJsonObject(streamOptions)) {
    throw invalidRequest('stream_options must be an object', { code: 'invalid_body', param: 'stream_options' });
  }
  const includeUsage = streamOptions?.['include_usage'] === true;
  return { ...request, stream: readStreamFlag(request.body), includeUsage };
}

async function complete(target: ResolvedTarget, request: ChatRequest, context: RequestContext): Promise<CompletionResult> {
  const provider = target.adapter.name;
  const upstreamBody = JSON.stringify(buildUpstreamBody(request, target.model));
  const response = await forwardToTarget(target, 'completions', json, upstreamBody, context);
  if (request.stream) {
    const chunkOptions = { provider, providerJson: JSON.stringify(provider), includeUsage: request.includeUsage };
    return { kind: 'stream', body: response.body, chunkOptions };
  }
  return { kind: 'json', answer: readJsonAnswer(await readBody(response, provider, context.signal), provider, 'choices') };
}

/**
 * `POST /v1/moderations`: routed by `model`; without one (OpenAI's default applies) it goes
 * to the `provider` hint's instance or the first OpenAI-wire instance, body unchanged.
 */
export async function runModeration(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<JsonAnswer>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  const fields = body as Record<string, unknown>;
  if (fields['input'] === undefined || fields['input'] === null) {
    throw invalidRequest('you must provide an input parameter', { code: 'missing_field', param: 'input' });
  }
  const withModel = fields['model'] !== undefined && fields['model'] !== null;
  const request = withModel ? readModelFields(fields) : { body: fields, selector: '', hint: readHint(fields['provider']) };
  const plan = withModel ? undefined : defaultModelPlan(dependencies.catalog, request.hint);
  const upstreamBody = (target: ResolvedTarget): string => {
    if (withModel) return JSON.stringify(upstreamBodyOf(fields, target.model));
    const { provider: _hint, ...rest } = fields;
    return JSON.stringify(rest);
  };
  return runCall(
    moderationsCodec,
    {
      selector: request.selector,
      hint: request.hint,
      stream: false,
      body: fields,
      ...(plan === undefined ? {} : { plan }),
      call: async (target) => {
        const response = await forwardToTarget(target, 'moderations', json, upstreamBody(target), context);
        return readJsonAnswer(await readBody(response, target.adapter.name, context.signal), target.adapter.name, 'results');
      },
    },
    context,
    dependencies,
  );
}

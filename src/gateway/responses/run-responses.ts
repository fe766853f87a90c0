import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { invalidRequest } from '../../errors/gateway-error.ts';
import { servesResponsesApi } from '../../providers/provider-types.ts';
import { readBody, upstreamErrorOf } from '../../providers/upstream-body.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import type { ChatPipelineDependencies } from '../chat-completions.ts';
import { readJsonAnswer } from '../json-answer.ts';
import { readModelFields, readStreamFlag, upstreamBodyOf, type ModelFields } from '../model-fields.ts';
import { runModelCall, type ModelCallOutcome } from '../model-call.ts';
import type { RequestContext } from '../request-context.ts';
import { responseFromChat } from './from-chat-response.ts';
import type { ResponseSeed } from './response-object.ts';
import { nativePassthrough, translatedChatStream, type ResponsesStreamTranslator } from './stream-translators.ts';
import { toChatRequest } from './to-chat-request.ts';
import { meteredUsageOf } from './usage.ts';

export type ResponsesResult =
  { kind: 'json'; body: string; usage: UsageObject | null } | { kind: 'stream'; upstream: Readable; translator: ResponsesStreamTranslator };

export type ResponsesPipeline = (body: unknown, context: RequestContext) => Promise<ModelCallOutcome<ResponsesResult>>;

interface ResponsesRequest extends ModelFields {
  stream: boolean;
}

const endpoint = '/v1/responses';
/** Targets remembered as chat-only are forgotten past this many (a bound, not a policy). */
const maximumRemembered = 1000;

/**
 * `POST /v1/responses`. Instances whose type has OpenAI's Responses API get the request as
 * is (model replaced, `provider` hint removed) and their answer relayed; every other
 * provider gets it translated into a chat completion and the answer translated back. An
 * instance of such a type that answers 404/405 on `/responses` (an OpenAI-compatible proxy
 * configured as `openai`) is served through chat instead, and remembered per model.
 */
export function createResponsesPipeline(dependencies: ChatPipelineDependencies): ResponsesPipeline {
  const chatOnly = new Set<string>();
  const call = async (target: ResolvedTarget, request: ResponsesRequest, context: RequestContext): Promise<ResponsesResult> => {
    const key = `${target.adapter.name}/${target.model}`;
    if (!servesResponsesApi(target.adapter.type) || chatOnly.has(key)) return callThroughChat(target, request, context);
    const native = await callNative(target, request, context);
    if (native !== null) return native;
    const translated = await callThroughChat(target, request, context);
    if (chatOnly.size >= maximumRemembered) chatOnly.clear();
    chatOnly.add(key);
    return translated;
  };
  return async (body, context) => {
    const fields = readModelFields(body);
    checkInput(fields.body);
    const request: ResponsesRequest = { ...fields, stream: readStreamFlag(fields.body) };
    return runModelCall(
      {
        endpoint,
        selector: request.selector,
        hint: request.hint,
        stream: request.stream,
        body: request.body,
        call: (target) => call(target, request, context),
      },
      context,
      dependencies,
    );
  };
}

/**
 * `input` is a string or a list of items; only a stored prompt or earlier state (which a
 * native upstream may hold) lets a request go without it. Checked before any limit counts it.
 */
function checkInput(body: Record<string, unknown>): void {
  const input = body['input'];
  if (typeof input === 'string' || Array.isArray(input)) return;
  if (input !== undefined && input !== null) {
    throw invalidRequest('input must be a string or an array of items', { code: 'invalid_body', param: 'input' });
  }
  if (!isStateful(body)) throw invalidRequest('you must provide an input parameter', { code: 'missing_field', param: 'input' });
}

/** Fields whose state only a native Responses upstream holds (chat cannot carry them). */
const statefulFields = ['prompt', 'previous_response_id', 'conversation'];

function isStateful(body: Record<string, unknown>): boolean {
  return statefulFields.some((field) => body[field] !== undefined && body[field] !== null);
}

/**
 * Null when the instance has no `/responses` route (404/405). A 404 to a request that names
 * stored state (an expired `previous_response_id`) is the upstream's own answer: relayed.
 */
async function callNative(target: ResolvedTarget, request: ResponsesRequest, context: RequestContext): Promise<ResponsesResult | null> {
  const provider = target.adapter.name;
  const response = await target.adapter.forward(
    {
      method: 'POST',
      path: 'responses',
      headers: { 'content-type': 'application/json', accept: request.stream ? 'text/event-stream' : 'application/json' },
      body: JSON.stringify(upstreamBodyOf(request.body, target.model)),
    },
    { signal: context.signal, requestId: context.requestId },
  );
  if (response.statusCode === 405 || (response.statusCode === 404 && !isStateful(request.body))) {
    await response.body.dump();
    return null;
  }
  if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, provider);
  const type = response.headers['content-type'];
  if (request.stream && typeof type === 'string' && type.includes('text/event-stream')) {
    return { kind: 'stream', upstream: response.body, translator: nativePassthrough() };
  }
  const answer = readJsonAnswer(await readBody(response, provider, context.signal), provider, 'output');
  return { kind: 'json', body: answer.body, usage: meteredUsageOf(answer.parsed['usage']) };
}

async function callThroughChat(target: ResolvedTarget, request: ResponsesRequest, context: RequestContext): Promise<ResponsesResult> {
  const provider = target.adapter.name;
  const seed: ResponseSeed = {
    idBase: randomBytes(24).toString('hex'),
    createdAt: Math.floor(Date.now() / 1000),
    model: target.model,
    provider,
    request: request.body,
  };
  const chat = toChatRequest(request.body, target.model, provider);
  const result = await target.adapter.chatCompletion(chat, { signal: context.signal, requestId: context.requestId });
  if (result.kind === 'stream') return { kind: 'stream', upstream: result.body, translator: translatedChatStream(seed) };
  const answer = readJsonAnswer(result.body, provider, 'choices');
  return { kind: 'json', body: JSON.stringify(responseFromChat(answer.parsed, seed)), usage: answer.usage };
}

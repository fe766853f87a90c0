import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { invalidRequest } from '../../errors/gateway-error.ts';
import type { ActiveGuardrails } from '../../guardrails/pipeline.ts';
import type { JsonResult, StreamResult } from '../../providers/provider.ts';
import { servesResponsesApi } from '../../providers/provider-types.ts';
import { readBody, upstreamErrorOf } from '../../providers/upstream-body.ts';
import { ResponseState, type PreparedInput } from '../../responses/response-state.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { RoutePlan } from '../../routing/route-planner.ts';
import { readHint } from '../relay/model-relay.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { readJsonAnswer } from '../json-answer.ts';
import { readModelFields, readStreamFlag, upstreamBodyOf, type ModelFields } from '../model-fields.ts';
import { runCall, type ExecutedOutcome } from './call-codec.ts';
import type { Answer, EndpointCodec } from '../run-model-request.ts';
import type { RequestContext } from '../request-context.ts';
import { responseFromChat } from '../responses/from-chat-response.ts';
import type { ResponseSeed } from '../responses/response-object.ts';
import { nativePassthrough, translatedChatStream, type ResponsesStreamTranslator } from '../responses/stream-translators.ts';
import { toChatRequest } from '../responses/to-chat-request.ts';
import { meteredUsageOf } from '../responses/usage.ts';
import { assertNativeReferencesVisible, recordNativeResponse, type NativeOwnership } from '../responses/native-ownership.ts';
import type { OwnershipStore } from '../../ownership/ownership-store.ts';
import { noBetaSignals, type BetaSignals } from '../responses/beta-signals.ts';
import { missingModel, promptPlan } from '../responses/prompt-plan.ts';

export type ResponsesResult =
  { kind: 'json'; body: string; usage: UsageObject | null } | { kind: 'stream'; upstream: Readable; translator: ResponsesStreamTranslator };

export type ResponsesPipeline = (body: unknown, context: RequestContext, beta?: BetaSignals) => Promise<ExecutedOutcome<ResponsesResult>>;

interface ResponsesRequest extends ModelFields {
  stream: boolean;
  /** Null when the gateway keeps no state for this request (no store, nothing referenced). */
  state: RequestState | null;
  /** Owners of native responses; null: nothing is checked nor recorded (no store). */
  owners: NativeOwnership | null;
  /** The client's beta signals, for a native upstream. */
  beta: BetaSignals;
  /** No `model`: a stored prompt, planned by `promptPlan` and sent as is on the native path only. */
  modelless: boolean;
  readonly plan?: RoutePlan;
}

/** The request's view of the response store: its resolved input (once, whatever the attempts) and the save. */
interface RequestState {
  prepare(): Promise<PreparedInput>;
  save(response: Record<string, unknown>, prepared: PreparedInput, target: ResolvedTarget): Promise<void>;
  /** Whether the gateway holds every piece of state the request names. */
  resolves(): Promise<boolean>;
  /** Remembers the native instance that holds response `id`. */
  point(id: string, target: ResolvedTarget): Promise<void>;
  /** The request's `store` is not false. */
  store: boolean;
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
 * Through chat, `state` resolves `previous_response_id` and `item_reference` items and keeps
 * the response unless the request says `store: false` (src/responses/).
 */
export function createResponsesPipeline(
  dependencies: ChatPipelineDependencies,
  state: ResponseState | null = null,
  ownership: OwnershipStore | null = null,
): ResponsesPipeline {
  const owners = ownership === null ? null : { store: ownership, state };
  const chatOnly = new Set<string>();
  // Guardrails in scope: the request goes through chat, the one shape they read.
  const call = async (
    target: ResolvedTarget,
    request: ResponsesRequest,
    context: RequestContext,
    guard: ActiveGuardrails | null,
  ): Promise<ResponsesResult> => {
    if (request.modelless) return callPrompt(target, request, context, guard);
    const key = `${target.adapter.name}/${target.model}`;
    if (guard !== null || !servesResponsesApi(target.adapter.type) || chatOnly.has(key))
      return callThroughChat(target, request, context, guard);
    const native = await callNative(target, request, context);
    // State the gateway holds (a response created on another provider): this request only goes through chat.
    if (native === heldByGateway) return callThroughChat(target, request, context, guard);
    if (native !== null) return native;
    const translated = await callThroughChat(target, request, context, guard);
    if (chatOnly.size >= maximumRemembered) chatOnly.clear();
    chatOnly.add(key);
    return translated;
  };
  const codec: EndpointCodec<ResponsesRequest, ResponsesResult> = {
    endpoint,
    guarded: true,
    estimateBody: (request) => request.body,
    call,
    answerOf: (result): Answer | null => (result.kind === 'json' ? result : null),
  };
  return async (body, context, beta = noBetaSignals) => {
    const modelless = isWithoutModel(body);
    const fields = modelless ? { body, selector: '', hint: readHint(body['provider']) } : readModelFields(body);
    checkInput(fields.body, modelless);
    const stream = readStreamFlag(fields.body);
    const plan = modelless ? { plan: promptPlan(dependencies.catalog, fields.hint) } : {};
    const request: ResponsesRequest = {
      ...fields,
      stream,
      state: requestState(state, fields.body, context),
      owners,
      beta,
      modelless,
      ...plan,
    };
    return runCall(codec, request, context, dependencies);
  };
}

/**
 * `input` is a string or a list of items; only a stored prompt or earlier state (which a
 * native upstream may hold) lets a request go without it. Checked before any limit counts it.
 */
/** `input` is a string or items; without a model (a stored prompt) the upstream decides what else it needs. */
function checkInput(body: Record<string, unknown>, modelless: boolean): void {
  const input = body['input'];
  if (typeof input === 'string' || Array.isArray(input)) return;
  if (input !== undefined && input !== null) {
    throw invalidRequest('input must be a string or an array of items', { code: 'invalid_body', param: 'input' });
  }
  if (!modelless && !isStateful(body))
    throw invalidRequest('you must provide an input parameter', { code: 'missing_field', param: 'input' });
}

/** Fields whose state only a native Responses upstream holds (chat cannot carry them). */
const statefulFields = ['prompt', 'previous_response_id', 'conversation'];

function isStateful(body: Record<string, unknown>): boolean {
  return statefulFields.some((field) => body[field] !== undefined && body[field] !== null);
}

/** A request without `model` that names a stored prompt (OpenAI takes the prompt's model). */
/** A request without `model`, which the API allows (a stored prompt names its own): the native path of the default instance. */
function isWithoutModel(body: unknown): body is Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) return false;
  const model = (body as Record<string, unknown>)['model'];
  return model === undefined || model === null;
}

/** A stored prompt goes to the native path alone: chat cannot carry it, and guardrails read chat (fail closed). */
async function callPrompt(
  target: ResolvedTarget,
  request: ResponsesRequest,
  context: RequestContext,
  guard: ActiveGuardrails | null,
): Promise<ResponsesResult> {
  if (guard !== null) throw missingModel();
  const native = await callNative(target, request, context);
  if (native === null || native === heldByGateway) throw missingModel();
  return native;
}

const heldByGateway = Symbol('held by the gateway');

/** A model-less body as the client sent it, the gateway's `provider` hint removed. */
function withoutHint(body: Record<string, unknown>): Record<string, unknown> {
  const { provider: _hint, ...rest } = body;
  return rest;
}

/**
 * Null when the instance has no `/responses` route (404/405). A 404 to a request that names
 * stored state (an expired `previous_response_id`, an `item_reference`) is the upstream's own
 * answer: relayed, unless the gateway holds that state itself (`heldByGateway`).
 */
async function callNative(
  target: ResolvedTarget,
  request: ResponsesRequest,
  context: RequestContext,
): Promise<ResponsesResult | null | typeof heldByGateway> {
  const provider = target.adapter.name;
  // Another tenant's state is never named to the upstream (ADR 28).
  if (request.owners !== null) await assertNativeReferencesVisible(request.owners, context, provider, request.body);
  const response = await target.adapter.forward(
    {
      method: 'POST',
      path: `responses${request.beta.query}`,
      headers: {
        'content-type': 'application/json',
        accept: request.stream ? 'text/event-stream' : 'application/json',
        ...request.beta.headers,
      },
      body: JSON.stringify(request.modelless ? withoutHint(request.body) : upstreamBodyOf(request.body, target.model)),
      ...(request.modelless ? {} : { model: target.model }),
    },
    { signal: context.signal, requestId: context.requestId },
  );
  if (response.statusCode === 404 && request.state !== null && (await request.state.resolves())) {
    await response.body.dump();
    return heldByGateway;
  }
  const namesState = isStateful(request.body) || ResponseState.references(request.body);
  if (response.statusCode === 405 || (response.statusCode === 404 && !namesState)) {
    await response.body.dump();
    return null;
  }
  if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, provider);
  const type = response.headers['content-type'];
  // The instance keeps what it stored; the gateway remembers where, for GET and DELETE by id.
  const point = async (answer: Record<string, unknown>): Promise<void> => {
    if (request.owners !== null) await recordNativeResponse(request.owners.store, context, provider, answer);
    if (request.state?.store === true && answer['store'] !== false && typeof answer['id'] === 'string')
      await request.state.point(answer['id'], target);
  };
  if (request.stream && typeof type === 'string' && type.includes('text/event-stream')) {
    return { kind: 'stream', upstream: response.body, translator: nativePassthrough(provider, point) };
  }
  const answer = readJsonAnswer(await readBody(response, provider, context.signal), provider, 'output');
  await point(answer.parsed);
  return { kind: 'json', body: answer.body, usage: meteredUsageOf(answer.parsed['usage']) };
}

async function callThroughChat(
  target: ResolvedTarget,
  request: ResponsesRequest,
  context: RequestContext,
  guard: ActiveGuardrails | null,
): Promise<ResponsesResult> {
  const provider = target.adapter.name;
  const state = request.state;
  const prepared = state === null ? null : await state.prepare();
  const seed: ResponseSeed = {
    idBase: randomBytes(24).toString('hex'),
    createdAt: Math.floor(Date.now() / 1000),
    model: target.model,
    provider,
    request: request.body,
    store: state?.store ?? false,
    previousResponseId: prepared?.previousResponseId ?? null,
  };
  const chat = toChatRequest(prepared === null ? request.body : resolvedBody(request.body, prepared), target.model, provider);
  const upstream = guard === null ? chat : await guard.input(chat);
  const called = await target.adapter.chatCompletion(upstream, { signal: context.signal, requestId: context.requestId });
  const result = guard === null ? called : guardedResult(called, guard);
  const save = async (response: Record<string, unknown>): Promise<void> => {
    if (state !== null && prepared !== null && state.store) await state.save(response, prepared, target);
  };
  if (result.kind === 'stream') return { kind: 'stream', upstream: result.body, translator: translatedChatStream(seed, save) };
  const answer = readJsonAnswer(result.body, provider, 'choices');
  const response = responseFromChat(answer.parsed, seed);
  await save(response);
  return { kind: 'json', body: JSON.stringify(response), usage: answer.usage };
}

function guardedResult(result: JsonResult | StreamResult, guard: ActiveGuardrails): JsonResult | StreamResult {
  return result.kind === 'stream' ? { ...result, body: guard.stream(result.body) } : { ...result, body: guard.output(result.body) };
}

/** The request with its stored state resolved into `input` (what the chat translation reads). */
function resolvedBody(body: Record<string, unknown>, prepared: PreparedInput): Record<string, unknown> {
  const { previous_response_id: _previous, ...rest } = body;
  return { ...rest, input: prepared.context };
}

/** Null when there is nothing to resolve nor to keep. */
function requestState(state: ResponseState | null, body: Record<string, unknown>, context: RequestContext): RequestState | null {
  const store = body['store'] !== false;
  if (state === null || (!store && !ResponseState.references(body))) return null;
  let preparing: Promise<PreparedInput> | undefined;
  return {
    store,
    prepare: () => (preparing ??= state.prepare(body, context.userPath)),
    resolves: () =>
      ResponseState.references(body)
        ? (preparing ??= state.prepare(body, context.userPath)).then(
            () => true,
            () => false,
          )
        : Promise.resolve(false),
    save: (response, prepared, target) =>
      state.save({
        response,
        own: prepared.own,
        previousResponseId: prepared.previousResponseId,
        userPath: context.userPath,
        provider: target.adapter.name,
        model: target.model,
      }),
    point: (id, target) => state.point(id, target.adapter.name, context.userPath),
  };
}

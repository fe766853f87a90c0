import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VirtualModelNames } from '../../auth/allowlist.ts';
import type { BudgetService } from '../../budgets/budget-service.ts';
import { defaultOutputCap, estimateTokens, type TokenEstimate } from '../../budgets/estimate.ts';
import { attemptStatus } from '../../errors/envelope.ts';
import { invalidRequest, notFound } from '../../errors/gateway-error.ts';
import { admitRequest } from '../../admission/admit.ts';
import { jsonObjectOfBody, passthroughPath, queryOf, rawRestOf, unreportedUsage } from '../../gateway/relay/passthrough.ts';
import { clientResponseHeaders, upstreamRequestHeaders } from '../../gateway/relay/relay-headers.ts';
import {
  assertPassthroughOwned,
  createdResponseRecorder,
  ownedCallRecorder,
  storedChatRecorder,
  type PassthroughOwnedCall,
} from '../../gateway/relay/passthrough-ownership.ts';
import type { UsageTap } from '../../gateway/relay/usage-tap.ts';
import type { NativeOwnership } from '../../gateway/responses/native-ownership.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import type { RateLimiter } from '../../ratelimit/rate-limiter.ts';
import { seesAll } from '../../ownership/visibility.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { Metering } from '../../usage/metering.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { requestContextOf } from '../request-context.ts';
import { checkPassthroughModels } from './passthrough-access.ts';
import { relayToClient } from './relay-reply.ts';

export interface PassthroughDependencies {
  catalog: ModelCatalog;
  limiter: RateLimiter | null;
  budgets: BudgetService | null;
  metering: Metering;
  /** The user-path header, the gateway's own and never forwarded. */
  userPathHeader: string;
  /** Owners of files, batches, responses and the catalogue's resources (ADR 28, ADR 40); absent: nothing is checked. */
  owners?: NativeOwnership | null;
  /** For the model allowlist: a name it lists that is a virtual model's opens no concrete model. */
  virtualModels: VirtualModelNames | null;
}

interface PassthroughParams {
  instance: string;
  '*'?: string;
}

/**
 * `/p/{instance}/{path...}`, any method: the request goes to the instance's base URL with
 * its bytes untouched (a raw body parser in this scope alone, so JSON is never
 * re-serialised), the query kept, the instance's credentials in place of the client's;
 * the upstream's status, headers and body come back as they are, errors included.
 */
export function registerPassthroughRoutes(app: FastifyInstance, dependencies: PassthroughDependencies): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const handler = (request: FastifyRequest<{ Params: PassthroughParams }>, reply: FastifyReply): Promise<FastifyReply> =>
      passthrough(request, reply, dependencies);
    scope.all('/p/:instance', handler);
    scope.all('/p/:instance/*', handler);
  });
}

/**
 * One relayed request. It counts as one request under the user-path and provider rules
 * (and model rules when its JSON body names a `model`), reserves its budget estimate like
 * any model call (admitRequest: the body's caps and counts at the model's price), and holds
 * its concurrency slots and the hold until the response ends. Usage is read from the answer
 * as it is relayed (a JSON answer of any size, an event stream: usage-tap.ts) and recorded
 * like chat's; a model call whose answer reported none (a stream without usage, one the
 * client left, a background response) is charged its estimate, token counting excepted.
 */
async function passthrough(
  request: FastifyRequest<{ Params: PassthroughParams }>,
  reply: FastifyReply,
  dependencies: PassthroughDependencies,
): Promise<FastifyReply> {
  const { instance } = request.params;
  const adapter = dependencies.catalog.instances.get(instance)?.adapter;
  if (adapter === undefined) {
    throw notFound(`unknown provider instance "${instance}": no configured instance has that name`, { code: 'unknown_provider' });
  }
  // The path as sent, not Fastify's decoded parameter: `%2F` and `%3F` stay what they were.
  const path = passthroughPath(rawRestOf(request.url), queryOf(request.url), adapter.baseUrl);
  const body = Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : undefined;
  const json = jsonObjectOfBody(body, request.headers['content-type']);
  assertReadableBody(request, body);
  // The model that runs: the path's where the provider's API carries it there, else the body's.
  const model = checkPassthroughModels(request, instance, adapter, dependencies.virtualModels, json);
  const owners = dependencies.owners ?? null;
  const owned = owners === null ? null : await assertPassthroughOwned(owners, request, instance, path, request.method, body);
  const context = requestContextOf(request, reply);
  // Estimated when first needed (a budget covers the path, or the answer reported no usage).
  let priced: PricedEstimate | null | undefined;
  const pricedCall = (): PricedEstimate | null =>
    (priced ??= pricedEstimate(dependencies.metering, instance, model, json, body?.length ?? 0));
  const route = model === undefined ? { provider: instance } : { provider: instance, model };
  const admission = await admitRequest(context.userPath, dependencies, route, {}, () => pricedCall()?.cost ?? null);
  // A client that left while being admitted (a Redis round trip) has had its 'close' already.
  if (context.signal.aborted) {
    admission.release();
    throw clientClosedRequest();
  }
  context.abort.whenClosed(admission.release);
  request.logFields = { ...route };
  const report = (status: number, usage: Record<string, unknown> | null, stream: boolean, executed?: string | null): void =>
    dependencies.metering.report({
      context,
      endpoint: `/p/${instance}/${path.split('?')[0] ?? ''}`,
      provider: instance,
      model: model ?? executed ?? '',
      usage,
      status,
      stream,
    });
  let response: UpstreamResponse;
  try {
    const headers = upstreamRequestHeaders(request.headers, dependencies.userPathHeader, {
      forwardAccountHeaders: adapter.forwardAccountHeaders === true,
    });
    response = await adapter.forward({ method: request.method, path, headers, body: body ?? null }, context);
  } catch (error) {
    report(attemptStatus(error, context.signal.aborted), null, false);
    admission.release();
    throw context.signal.aborted ? clientClosedRequest() : error;
  }
  const headers = { ...clientResponseHeaders(response.headers), ...admission.headers };
  const record = owners === null ? null : recorderOf(owners, request, { adapter, path, status: response.statusCode, json, owned });
  const result = await relayToClient(request, reply, response, headers, context.abort, false, record);
  // An error answer relayed whole produced nothing; anything else that reported no usage is charged its estimate.
  const unreported = result.usage === null && (result.status < 400 || result.ending !== 'completed') && !countsTokens(path);
  const estimate = unreported ? pricedCall()?.estimate : undefined;
  const usage = estimate === undefined ? result.usage : unreportedUsage(estimate, result.relayed);
  report(result.status, usage, /^text\/event-stream\b/i.test(String(response.headers['content-type'] ?? '')), result.model);
  admission.release();
  return reply;
}

/** What records the owner of what a passthrough call created: a response, or a catalogue resource (ADR 28, ADR 40). */
function recorderOf(
  owners: NativeOwnership,
  request: FastifyRequest,
  call: {
    adapter: ProviderAdapter;
    path: string;
    status: number;
    json: Readonly<Record<string, unknown>> | undefined;
    owned: PassthroughOwnedCall | null;
  },
): ((tap: UsageTap) => Promise<void>) | null {
  const { adapter, path, status, json } = call;
  const instance = adapter.name;
  const created = { instance, path, method: request.method, status, store: json?.['store'] !== false };
  return (
    createdResponseRecorder(owners, request, created, request.log) ??
    storedChatRecorder(owners, request, adapter, { path, method: request.method, status, json }, request.log) ??
    ownedCallRecorder(owners, request, instance, call.owned, { status, json }, request.log)
  );
}

interface PricedEstimate {
  estimate: TokenEstimate;
  cost: number;
}

/**
 * The estimate of a call that names a priced model, and its cost; null when there is nothing to
 * price. A body the gateway cannot read (compressed, not JSON) is priced by its size and the
 * default output cap: never as free.
 */
function pricedEstimate(
  metering: Metering,
  instance: string,
  model: string | undefined,
  json: Readonly<Record<string, unknown>> | undefined,
  bodyBytes: number,
): PricedEstimate | null {
  if (model === undefined) return null;
  const estimate = json === undefined ? { promptTokens: Math.ceil(bodyBytes / 4), outputTokens: defaultOutputCap } : estimateTokens(json);
  const cost = metering.costEstimate(instance, model, estimate);
  return cost === null ? null : { estimate, cost };
}

/**
 * A compressed request body (`Content-Encoding` other than identity) is refused for callers who
 * do not see everything: the upstream would inflate and run what the gateway could not read
 * (its model, the Responses state it names, its estimate), so no check could hold.
 */
function assertReadableBody(request: FastifyRequest, body: Buffer | undefined): void {
  const encoding = String(request.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (body === undefined || encoding === '' || encoding === 'identity' || seesAll(request)) return;
  throw invalidRequest('a compressed request body (Content-Encoding) cannot be checked: send it uncompressed', { code: 'invalid_body' });
}

/** Token counting (Anthropic `messages/count_tokens`, Gemini `:countTokens`) bills nothing and reports no usage. */
const countsTokens = (path: string): boolean => /(?:count_tokens|:countTokens)$/i.test(path.split('?')[0] ?? '');

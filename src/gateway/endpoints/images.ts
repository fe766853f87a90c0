import { invalidRequest } from '../../errors/gateway-error.ts';
import { readBody } from '../../providers/upstream-body.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { readJsonAnswer, type JsonAnswer } from '../json-answer.ts';
import { callCodec, runCall, type ExecutedOutcome } from './call-codec.ts';
import { readModelFields, upstreamBodyOf } from '../model-fields.ts';
import type { RequestContext } from '../request-context.ts';
import { defaultModelPlan, forwardToTarget, readHint, servesRelays } from '../relay/model-relay.ts';
import { boundaryOf, editForm, fieldOf, readForm } from '../relay/multipart.ts';

/** An image answer: JSON read whole (its `usage` metered, gpt-image-1 has one), or a stream for the HTTP layer to relay. */
export type ImageResult = { kind: 'json'; answer: JsonAnswer } | { kind: 'stream'; response: UpstreamResponse };

/** The two image endpoints that take uploaded files. */
export type ImageUpload = 'edits' | 'variations';

const imageAnswer = (result: ImageResult): JsonAnswer | null => (result.kind === 'json' ? result.answer : null);
const imageCodecs = {
  generations: callCodec('/v1/images/generations', imageAnswer, servesRelays),
  edits: callCodec('/v1/images/edits', imageAnswer, servesRelays),
  variations: callCodec('/v1/images/variations', imageAnswer, servesRelays),
};

/** The fields an image request routes on; `selector` is null without a `model` (the upstream's default applies). */
interface ImageRouting {
  selector: string | null;
  hint: string | undefined;
  stream: boolean;
  /** What the budget estimate reads (`n` images). */
  body: Readonly<Record<string, unknown>>;
}

/**
 * `POST /v1/images/generations`: a JSON body routed by its `model` like chat (or, without
 * one, to the hint's or the first OpenAI-wire instance, body unchanged), relayed to an
 * OpenAI-wire instance.
 */
export async function runImageGeneration(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<ImageResult>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  const fields = body as Record<string, unknown>;
  const withModel = fields['model'] !== undefined && fields['model'] !== null;
  const selector = withModel ? readModelFields(fields).selector : null;
  const routing = { selector, hint: readHint(fields['provider']), stream: fields['stream'] === true, body: fields };
  const upstreamBody = (target: ResolvedTarget): string => {
    if (withModel) return JSON.stringify(upstreamBodyOf(fields, target.model));
    const { provider: _hint, ...rest } = fields;
    return JSON.stringify(rest);
  };
  return runImageCall(
    'generations',
    routing,
    (target) => forwardToTarget(target, 'images/generations', 'application/json', upstreamBody(target), context),
    context,
    dependencies,
  );
}

/**
 * `POST /v1/images/edits` and `/v1/images/variations`: a multipart upload routed by its
 * `model` field; the upstream receives the same form, files intact, with `model` set to the
 * target's bare id and the `provider` hint removed.
 */
export async function runImageUpload(
  kind: ImageUpload,
  body: unknown,
  contentType: string | undefined,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<ImageResult>> {
  if (!Buffer.isBuffer(body)) throw invalidRequest('expected a multipart/form-data body with an image', { code: 'invalid_body' });
  const form = readForm(body, boundaryOf(contentType));
  const model = fieldOf(form, 'model');
  const selector = model === undefined || model === '' ? null : model;
  const stream = fieldOf(form, 'stream') === 'true';
  // The estimate reads the form's image count (`n`, text in a form).
  const routing = { selector, hint: readHint(fieldOf(form, 'provider') || undefined), stream, body: { n: fieldOf(form, 'n') } };
  const upstreamForm = (target: ResolvedTarget): Buffer =>
    editForm(form, selector === null ? { drop: ['provider'] } : { set: { model: target.model }, drop: ['provider'] });
  return runImageCall(
    kind,
    routing,
    (target) => forwardToTarget(target, `images/${kind}`, contentType as string, upstreamForm(target), context),
    context,
    dependencies,
  );
}

async function runImageCall(
  kind: 'generations' | ImageUpload,
  routing: ImageRouting,
  forward: (target: ResolvedTarget) => Promise<UpstreamResponse>,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<ImageResult>> {
  const plan = routing.selector === null ? defaultModelPlan(dependencies.catalog, routing.hint) : undefined;
  return runCall(
    imageCodecs[kind],
    {
      selector: routing.selector ?? '',
      hint: routing.hint,
      stream: routing.stream,
      body: routing.body,
      ...(plan === undefined ? {} : { plan }),
      call: async (target): Promise<ImageResult> => {
        const response = await forward(target);
        if (routing.stream) return { kind: 'stream', response };
        const provider = target.adapter.name;
        return { kind: 'json', answer: readJsonAnswer(await readBody(response, provider, context.signal), provider, 'data') };
      },
    },
    context,
    dependencies,
  );
}

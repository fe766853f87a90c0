import { invalidRequest } from '../../errors/gateway-error.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { callCodec, relayed, runRelayedCall } from './call-codec.ts';
import type { StreamOutcome } from '../run-model-request.ts';
import { readModelFields, upstreamBodyOf } from '../model-fields.ts';
import type { RequestContext } from '../request-context.ts';
import { forwardToTarget } from '../relay/model-relay.ts';
import { boundaryOf, editForm, fieldOf, readForm } from '../relay/multipart.ts';

/** The two audio endpoints that take an uploaded file. */
export type AudioUpload = 'transcriptions' | 'translations';

/** Audio answers are relayed as they come (bytes, or events), their usage read on the way. */
const speechCodec = callCodec<UpstreamResponse>('/v1/audio/speech', relayed);
const uploadCodecs = {
  transcriptions: callCodec<UpstreamResponse>('/v1/audio/transcriptions', relayed),
  translations: callCodec<UpstreamResponse>('/v1/audio/translations', relayed),
};

/**
 * `POST /v1/audio/speech`: a JSON body routed by its `model` like chat (rate limits, budgets,
 * failover); the upstream's answer (audio bytes, or SSE with `stream_format: "sse"`) is
 * handed back unread for the HTTP layer to stream.
 */
export async function runSpeech(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<StreamOutcome<UpstreamResponse>> {
  const request = readModelFields(body);
  const upstreamBody = (target: ResolvedTarget): string => JSON.stringify(upstreamBodyOf(request.body, target.model));
  return runRelayedCall(
    speechCodec,
    {
      selector: request.selector,
      hint: request.hint,
      stream: request.body['stream_format'] === 'sse',
      body: request.body,
      call: (target) => forwardToTarget(target, 'audio/speech', 'application/json', upstreamBody(target), context),
    },
    context,
    dependencies,
  );
}

/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations`: a multipart upload routed
 * by its `model` field. The upstream receives the same form, bytes intact, with `model`
 * set to the target's bare id and the `provider` hint removed.
 */
export async function runAudioUpload(
  kind: AudioUpload,
  body: unknown,
  contentType: string | undefined,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<StreamOutcome<UpstreamResponse>> {
  if (!Buffer.isBuffer(body)) throw invalidRequest('expected a multipart/form-data body with a file', { code: 'invalid_body' });
  const form = readForm(body, boundaryOf(contentType));
  const selector = fieldOf(form, 'model');
  if (selector === undefined || selector === '') {
    throw invalidRequest('you must provide a model parameter', { code: 'missing_field', param: 'model' });
  }
  const hint = fieldOf(form, 'provider');
  const upstreamForm = (target: ResolvedTarget): Buffer => editForm(form, { set: { model: target.model }, drop: ['provider'] });
  return runRelayedCall(
    uploadCodecs[kind],
    {
      selector,
      hint: hint === '' ? undefined : hint,
      stream: fieldOf(form, 'stream') === 'true',
      body: {},
      call: (target) => forwardToTarget(target, `audio/${kind}`, contentType as string, upstreamForm(target), context),
    },
    context,
    dependencies,
  );
}

import { randomUUID } from 'node:crypto';
import type { ProviderSettings } from '../provider-settings.ts';
import { providerError } from '../../errors/gateway-error.ts';
import type {
  CallContext,
  ChatRequestBody,
  ForwardRequest,
  JsonResult,
  ProviderAdapter,
  StreamResult,
  UpstreamModel,
} from '../provider.ts';
import { readBody } from '../upstream-body.ts';
import { bedrockErrorOf } from './errors.ts';
import type { UpstreamClient, UpstreamResponse } from '../upstream-client.ts';
import { convertChatRequest } from './convert-chat-request.ts';
import { convertChatResponse, parseConverseResponse } from './convert-chat-response.ts';
import { createEmbeddingsApi } from './embeddings-api.ts';
import { parseModelList } from './parse-model-list.ts';
import { openConvertedStream } from './stream-body.ts';
import { BedrockTransport } from './transport.ts';
import { isRecord } from './wire.ts';

const jsonHeaders = { 'content-type': 'application/json', accept: 'application/json' };
const streamHeaders = { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' };

/**
 * The AWS Bedrock adapter: chat completions go to the Converse API (ConverseStream for
 * streams, AWS's binary event stream decoded) and come back in OpenAI's shape; embeddings go
 * through InvokeModel (Titan, Cohere); requests are signed with SigV4 or carry a Bedrock API key.
 */
export function createBedrockAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const transport = new BedrockTransport(settings, client);
  const provider = settings.name;

  return {
    name: provider,
    type: settings.type,
    baseUrl: transport.runtimeBase,
    credentialHeaders: () => transport.staticHeaders(),
    embeddingsApi: createEmbeddingsApi(transport),

    async chatCompletion(request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult> {
      const converse = convertChatRequest(request, provider);
      const stream = request['stream'] === true;
      const response = await transport.send({
        method: 'POST',
        url: transport.modelUrl(request.model, stream ? 'converse-stream' : 'converse'),
        headers: stream ? streamHeaders : jsonHeaders,
        body: JSON.stringify(converse),
        signal: context.signal,
      });
      if (response.statusCode < 200 || response.statusCode > 299) throw await bedrockErrorOf(response, provider);
      const requestId = response.headers['x-amzn-requestid'];
      const id = `chatcmpl-${typeof requestId === 'string' && requestId !== '' ? requestId : randomUUID()}`;
      const created = Math.floor(Date.now() / 1000);
      if (stream) {
        const streamOptions = request['stream_options'];
        const includeUsage = isRecord(streamOptions) && streamOptions['include_usage'] === true;
        const options = { provider, id, created, model: request.model, includeUsage };
        return { kind: 'stream', body: await openConvertedStream(response.body, options, context.signal) };
      }
      const answer = parseConverseResponse(await readBody(response, provider, context.signal), provider);
      return { kind: 'json', body: JSON.stringify(convertChatResponse(answer, { id, created, model: request.model })) };
    },

    async listModels(signal: AbortSignal): Promise<UpstreamModel[]> {
      const url = new URL(`${transport.controlBase}/foundation-models`);
      const response = await transport.send({ method: 'GET', url, headers: { accept: 'application/json' }, signal });
      if (response.statusCode !== 200) throw await bedrockErrorOf(response, provider);
      const models = parseModelList(await readBody(response, provider, signal));
      if (models === null) {
        throw providerError(`upstream ${provider} returned an unreadable model list`, { provider, code: 'invalid_upstream_response' });
      }
      return models;
    },

    forward(request: ForwardRequest, context: CallContext): Promise<UpstreamResponse> {
      return transport.send({
        method: request.method,
        url: new URL(`${transport.runtimeBase}/${request.path}`),
        headers: request.headers,
        body: request.body ?? null,
        signal: context.signal,
      });
    },
  };
}

import { abortSourceOf } from '../../core/abort-source.ts';
import type { ProviderSettings } from '../provider-settings.ts';
import { providerError } from '../../errors/gateway-error.ts';
import { parseModelList } from '../openai-compatible/parse-model-list.ts';
import type {
  CallContext,
  ChatRequestBody,
  ForwardRequest,
  JsonResult,
  ProviderAdapter,
  StreamResult,
  UpstreamModel,
} from '../provider.ts';
import { bufferedUpstreamErrorOf, readBody, textOf, upstreamErrorOf } from '../upstream-body.ts';
import type { UpstreamClient, UpstreamResponse } from '../upstream-client.ts';
import { azureBaseUrlOf, azureEndpointOf, azureRealtimeUrl, azureUrlOf } from './azure-urls.ts';
import { azureCredentialHeaders, deploymentOf, modelOfBody, modelsOfDeployment, withDeployment } from './deployments.ts';

/**
 * Azure OpenAI (type `azure`): OpenAI's wire format at Azure's URLs. The JSON body of a
 * request names the deployment (`deployments[model]`, else the model id; a passthrough's
 * bytes stay as sent); classic URLs carry it in the path as well, with `api-version` in the
 * query (azure-urls.ts). Answers, content filter results included, pass through unchanged;
 * errors map like any upstream's (a 400 `content_filter` keeps its code,
 * src/providers/upstream-errors.ts).
 */
export function createAzureAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const endpoint = azureEndpointOf(settings.baseUrl, settings.options.apiVersion);
  const deployments = settings.options.deployments;
  const credentials = azureCredentialHeaders(settings.apiKey);
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...credentials };
  const provider = settings.name;

  return {
    name: settings.name,
    type: settings.type,
    baseUrl: azureBaseUrlOf(endpoint),
    credentialHeaders: () => ({ ...credentials }),
    realtimeUrl: (query) => azureRealtimeUrl(endpoint, query, deploymentOf(deployments, query.get('model') ?? '')),
    deploymentModels: (deployment) => modelsOfDeployment(deployments, deployment),

    async chatCompletion(request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult> {
      const deployment = deploymentOf(deployments, request.model);
      const url = azureUrlOf(endpoint, 'chat/completions', deployment);
      const body = JSON.stringify({ ...request, model: deployment });
      const abort = context.abort ?? abortSourceOf(context.signal);
      if (request['stream'] !== true) {
        const answer = await client.requestBuffered({ provider, url, method: 'POST', headers, body, abort });
        if (answer.statusCode < 200 || answer.statusCode > 299) throw bufferedUpstreamErrorOf(answer, provider);
        return { kind: 'json', body: textOf(answer.body) };
      }
      const response = await client.requestStream({ provider, url, method: 'POST', headers, body, abort });
      if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, provider);
      return { kind: 'stream', body: response.body };
    },

    async listModels(signal: AbortSignal): Promise<UpstreamModel[]> {
      if (deployments !== undefined && Object.keys(deployments).length > 0) return Object.keys(deployments).map((id) => ({ id }));
      const url = azureUrlOf(endpoint, 'models', null);
      const response = await client.request({ provider, url, method: 'GET', headers, signal });
      if (response.statusCode !== 200) throw await upstreamErrorOf(response, provider);
      const models = parseModelList(await readBody(response, provider, signal));
      if (models === null)
        throw providerError(`upstream ${provider} returned an unreadable model list`, { provider, code: 'invalid_upstream_response' });
      return models;
    },

    async forward(request: ForwardRequest, context: CallContext): Promise<UpstreamResponse> {
      const model = request.model ?? modelOfBody(request.body);
      const deployment = model === null ? null : deploymentOf(deployments, model);
      const body = deployment === null ? request.body : withDeployment(request.body, deployment);
      return client.request({
        provider,
        url: azureUrlOf(endpoint, request.path, deployment),
        method: request.method,
        headers: { ...request.headers, ...credentials },
        body: body ?? null,
        signal: context.signal,
      });
    },
  };
}

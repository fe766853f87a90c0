/**
 * Where an Azure OpenAI instance's requests go. Pure: the resource endpoint, the URL style
 * and the `api-version` come from the instance's settings; each OpenAI-relative path
 * (`chat/completions`, `embeddings`, `files?purpose=batch`, ...) maps to its Azure URL.
 */

/** The latest generally available dated `api-version` of the data-plane inference API. */
export const defaultAzureApiVersion = '2024-10-21';

export interface AzureEndpoint {
  /** The resource endpoint without a trailing slash, e.g. `https://name.openai.azure.com`. */
  readonly resource: string;
  /**
   * `deployments`: classic `{resource}/openai/deployments/{deployment}/...` URLs with a dated
   * `api-version`; `v1`: `{resource}/openai/v1/...`, where the deployment is the body's `model`.
   */
  readonly style: 'deployments' | 'v1';
  /** The `api-version` query value; null on the v1 API unless it is `preview`. */
  readonly apiVersion: string | null;
}

const v1Suffix = /\/openai\/v1$/;

/**
 * The v1 API is chosen by `api_version` `v1` or `preview`, or by a `base_url` that already
 * ends in `/openai/v1`; everything else is the classic deployment style.
 */
export function azureEndpointOf(baseUrl: string, apiVersion: string | undefined): AzureEndpoint {
  const trimmed = baseUrl.replace(/\/+$/, '');
  const version = apiVersion?.trim() === '' ? undefined : apiVersion?.trim();
  if (v1Suffix.test(trimmed) || version === 'v1' || version === 'preview') {
    return { resource: trimmed.replace(v1Suffix, ''), style: 'v1', apiVersion: version === 'preview' ? 'preview' : null };
  }
  return { resource: trimmed.replace(/\/openai$/, ''), style: 'deployments', apiVersion: version ?? defaultAzureApiVersion };
}

/**
 * Azure's classic Responses route refuses a dated `api-version` before 2025-03-01-preview
 * (400), and its classic realtime route takes preview versions only (2024-10-01-preview on):
 * with an older or GA configured version, those routes use this one.
 */
export const previewApiVersion = '2025-04-01-preview';
const firstResponsesVersion = '2025-03-01';
const firstRealtimeVersion = '2024-10-01';

/** Operations that Azure serves per deployment in the classic style. */
const deploymentScoped =
  /^(chat\/completions|completions|embeddings|audio\/(speech|transcriptions|translations)|images\/(generations|edits|variations))$/;

/** Whether `path` (OpenAI-relative, query allowed) names a per-deployment operation. */
export function isDeploymentScoped(path: string): boolean {
  return deploymentScoped.test(splitPath(path).route);
}

/**
 * The Azure URL of an OpenAI-relative `path`. A path that already starts with `openai/` is
 * Azure's own (passthrough) and goes under the resource as given. Otherwise: v1 style
 * `{resource}/openai/v1/{path}`; classic per-deployment operations
 * `{resource}/openai/deployments/{deployment}/{path}`; the rest (files, batches, responses,
 * models) `{resource}/openai/{path}`. `api-version` is added unless the query has one
 * (`responses` paths take at least `previewApiVersion`).
 */
export function azureUrlOf(endpoint: AzureEndpoint, path: string, deployment: string | null): URL {
  const { route, query } = splitPath(path);
  if (route.startsWith('openai/')) return new URL(`${endpoint.resource}/${route}${query}`);
  const url = new URL(`${endpoint.resource}/openai/${prefixOf(endpoint, route, deployment)}${route}${query}`);
  const version = versionFor(endpoint, route);
  if (version !== null && !url.searchParams.has('api-version')) url.searchParams.set('api-version', version);
  return url;
}

function versionFor(endpoint: AzureEndpoint, route: string): string | null {
  const version = endpoint.apiVersion;
  const dated = version !== null && /^\d{4}-\d{2}-\d{2}/.test(version);
  if (dated && endpoint.style === 'deployments' && /^responses(\/|$)/.test(route) && version < firstResponsesVersion) {
    return previewApiVersion;
  }
  return version;
}

/** The base URL the rest of the gateway sees (passthrough paths and realtime resolve under it). */
export function azureBaseUrlOf(endpoint: AzureEndpoint): string {
  return endpoint.style === 'v1' ? `${endpoint.resource}/openai/v1` : `${endpoint.resource}/openai`;
}

/**
 * The WebSocket URL of a realtime session: v1 `{resource}/openai/v1/realtime?model={deployment}`,
 * classic `{resource}/openai/realtime?deployment={deployment}&api-version=...` (a preview
 * version); the client's other query parameters kept.
 */
export function azureRealtimeUrl(endpoint: AzureEndpoint, query: URLSearchParams, deployment: string): string {
  const parameters = new URLSearchParams(query);
  const v1 = endpoint.style === 'v1';
  const url = new URL(`${endpoint.resource}/openai/${v1 ? 'v1/' : ''}realtime`);
  if (v1) parameters.set('model', deployment);
  else {
    parameters.delete('model');
    parameters.set('deployment', deployment);
  }
  const version = v1 ? endpoint.apiVersion : realtimeVersionOf(endpoint.apiVersion);
  if (version !== null && !parameters.has('api-version')) parameters.set('api-version', version);
  url.search = parameters.toString();
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

function realtimeVersionOf(version: string | null): string {
  return version !== null && version.endsWith('-preview') && version >= firstRealtimeVersion ? version : previewApiVersion;
}

function prefixOf(endpoint: AzureEndpoint, route: string, deployment: string | null): string {
  if (endpoint.style === 'v1') return 'v1/';
  if (deployment !== null && deploymentScoped.test(route)) return `deployments/${encodeURIComponent(deployment)}/`;
  return '';
}

function splitPath(path: string): { route: string; query: string } {
  const start = path.indexOf('?');
  const route = (start === -1 ? path : path.slice(0, start)).replace(/^\/+/, '');
  return { route, query: start === -1 ? '' : path.slice(start) };
}

import { parseJsonObject } from '../../core/json.ts';

/**
 * Azure addresses a model by its deployment: the instance's `deployments` map (model id ->
 * deployment name), else the model id itself. Pure helpers of the Azure adapter.
 */

export type DeploymentMap = Readonly<Record<string, string>>;

export function deploymentOf(deployments: DeploymentMap | undefined, model: string): string {
  return deployments !== undefined && Object.hasOwn(deployments, model) ? (deployments[model] as string) : model;
}

/**
 * The model ids served by a deployment (the reverse of `deploymentOf`): those mapped to it,
 * and its own name unless the map sends that id elsewhere; null when none is.
 */
export function modelsOfDeployment(deployments: DeploymentMap | undefined, deployment: string): readonly string[] | null {
  const models = Object.keys(deployments ?? {}).filter((model) => deployments?.[model] === deployment);
  if (deploymentOf(deployments, deployment) === deployment && !models.includes(deployment)) models.push(deployment);
  return models.length === 0 ? null : models;
}

/** The `model` of a JSON request body, text or bytes (a passthrough's), or null (not JSON, no string `model`). */
export function modelOfBody(body: unknown): string | null {
  const text = typeof body === 'string' ? body : Buffer.isBuffer(body) && body[0] === 0x7b ? body.toString('utf8') : null;
  if (text === null) return null;
  const model = parseJsonObject(text)?.['model'];
  return typeof model === 'string' && model !== '' ? model : null;
}

/**
 * A JSON body with its `model` set to the deployment (the v1 API and the classic Responses
 * route read the deployment from the body); any other body, or one already naming it, as is.
 */
export function withDeployment<T>(body: T, deployment: string): T | string {
  if (typeof body !== 'string') return body;
  const parsed = parseJsonObject(body);
  if (parsed === null || typeof parsed['model'] !== 'string' || parsed['model'] === deployment) return body;
  return JSON.stringify({ ...parsed, model: deployment });
}

/**
 * The headers that carry the instance's credential: Azure's `api-key`, or, for an `api_key`
 * written `Bearer <token>`, a Microsoft Entra ID token as `Authorization: Bearer <token>`.
 */
export function azureCredentialHeaders(apiKey: string | null): Record<string, string> {
  if (apiKey === null) return {};
  const token = /^Bearer\s+(\S.*)$/i.exec(apiKey)?.[1];
  return token === undefined ? { 'api-key': apiKey } : { authorization: `Bearer ${token}` };
}

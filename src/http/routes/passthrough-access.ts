import type { FastifyRequest } from 'fastify';
import { assertPassthroughAllowed, type VirtualModelNames } from '../../auth/allowlist.ts';
import { passthroughModels } from '../../gateway/relay/passthrough-models.ts';
import { rawRestOf } from '../../gateway/relay/passthrough.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import { assertModelNameLength } from '../../routing/model-name.ts';

/**
 * The passthrough's checks on the models a request runs, before it is admitted: every model
 * the path or body names is at most 256 characters (400 `model_name_too_long`), and each is in
 * the caller's model allowlist, or the caller has `<instance>/*` (403 `model_not_allowed`;
 * src/auth/allowlist.ts). Answers the model that runs, for rate-limit rules and usage.
 */
export function checkPassthroughModels(
  request: FastifyRequest,
  instance: string,
  adapter: ProviderAdapter,
  virtualModels: VirtualModelNames | null,
  json?: Readonly<Record<string, unknown>>,
): string | undefined {
  const body = Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : undefined;
  const models = passthroughModels({
    method: request.method,
    rest: rawRestOf(request.url),
    body,
    contentType: request.headers['content-type'],
    json,
    deploymentModels: adapter.deploymentModels?.bind(adapter),
  });
  for (const model of models.checked ?? []) assertModelNameLength(model);
  assertModelNameLength(models.executed);
  assertPassthroughAllowed(request.principal, instance, models.checked, virtualModels);
  return models.executed;
}

import { isJsonObject } from '../../core/json.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** The variables `versionVariable` matches, as docs/configuration.md writes them. */
export const azureVersionVariables = ['AZURE_API_VERSION', 'AZURE_<SUFFIX>_API_VERSION'] as const;

const versionVariable = /^AZURE(?:_([A-Z0-9_]+))?_API_VERSION$/;

/**
 * Azure settings from the environment, over the raw `providers` section once the
 * `<TYPE>_...` variables are applied (they override YAML the same way):
 * - `AZURE_API_VERSION` / `AZURE_<SUFFIX>_API_VERSION`: `api_version` of instance `azure` /
 *   `azure-<suffix>`;
 * - the Azure SDKs' own variables, for the instance `azure-openai` that `AZURE_OPENAI_API_KEY`
 *   declares: `AZURE_OPENAI_ENDPOINT` is its `base_url` (unless `AZURE_OPENAI_BASE_URL`),
 *   `OPENAI_API_VERSION` its `api_version` (unless `AZURE_OPENAI_API_VERSION`).
 * Only existing instances of type `azure` are touched.
 */
export function applyAzureEnvironment(providers: Record<string, unknown>, env: Env, origins: Map<string, string>): void {
  const set = (instance: string, field: string, variable: string): void => {
    const value = env[variable]?.trim();
    const target = providers[instance];
    if (!value || !isJsonObject(target) || target['type'] !== 'azure') return;
    target[field] = value;
    origins.set(`providers.${instance}.${field}`, variable);
  };
  set('azure-openai', 'api_version', 'OPENAI_API_VERSION');
  if (!env['AZURE_OPENAI_BASE_URL']?.trim()) set('azure-openai', 'base_url', 'AZURE_OPENAI_ENDPOINT');
  for (const variable of Object.keys(env).sort()) {
    const match = versionVariable.exec(variable);
    if (!match) continue;
    const suffix = match[1];
    set(suffix === undefined ? 'azure' : `azure-${suffix.toLowerCase().replaceAll('_', '-')}`, 'api_version', variable);
  }
}

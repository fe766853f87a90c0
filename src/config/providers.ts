import { providerTypes, type ProviderTypeProfile } from '../providers/provider-types.ts';
import { ConfigError } from '../errors/config-error.ts';
import { instanceName, type ConfigDocument } from './schema.ts';
import type { DisabledProvider, Settings } from './settings.ts';
import type { ProviderSettings } from '../providers/provider-settings.ts';
import { providerOptionsOf } from './provider-options.ts';
import { withVertexEnvironment } from '../providers/vertex/settings-from-env.ts';
import { withAwsEnvironment } from '../providers/bedrock/settings-from-env.ts';
import { buildVirtualModels } from './virtual-models.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** The `${VAR}` references of a YAML value without a `:-default` (an explicit default may well be empty). */
const referencePattern = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Before `${VAR}` expansion: records, for each provider's `api_key` written as `${VAR}`, the
 * variable it comes from (`providers.<name>.api_key` -> `VAR`), so an instance dropped for an
 * empty key names the variable to set. Environment overrides, applied later, replace these. A key
 * written as `${VAR}` that expands to nothing disables the instance whatever its type: the
 * file says it needs one.
 */
export function recordKeyVariables(document: unknown, origins: Map<string, string>): void {
  if (typeof document !== 'object' || document === null) return;
  const providers = (document as Record<string, unknown>)['providers'];
  if (typeof providers !== 'object' || providers === null) return;
  for (const [name, provider] of Object.entries(providers)) {
    const apiKey = typeof provider === 'object' && provider !== null ? (provider as Record<string, unknown>)['api_key'] : undefined;
    if (typeof apiKey !== 'string') continue;
    const variables = [...apiKey.matchAll(referencePattern)].map((match) => match[1]);
    if (variables.length > 0) origins.set(`providers.${name}.api_key`, variables.join(', '));
  }
}

/** The providers (registered and dropped), and the virtual models validated against their instance names. */
export function buildProvidersAndVirtualModels(
  document: ConfigDocument,
  origins: Map<string, string>,
  warnings: string[],
  env: Env,
): Pick<Settings, 'providers' | 'disabledProviders' | 'virtualModels'> {
  const { providers: registered, disabled } = buildProviders(document, origins, warnings);
  const providers = withAwsEnvironment(withVertexEnvironment(registered, env), env);
  return {
    providers,
    disabledProviders: disabled,
    // A virtual model may name a dropped instance: that target answers 503 provider_unavailable.
    virtualModels: buildVirtualModels(
      document.virtual_models,
      env,
      [...providers, ...disabled].map((provider) => provider.name),
    ),
  };
}

function buildProviders(
  document: ConfigDocument,
  origins: Map<string, string>,
  warnings: string[],
): { providers: ProviderSettings[]; disabled: DisabledProvider[] } {
  const providers: ProviderSettings[] = [];
  const disabled: DisabledProvider[] = [];
  for (const [name, provider] of Object.entries(document.providers)) {
    const key = origins.get(`providers.${name}`) ?? `providers.${name}`;
    const fromEnv = origins.has(`providers.${name}`);
    if (!instanceName.test(name)) {
      throw new ConfigError(key, 'an instance name uses letters, digits, ".", "_" and "-" only');
    }
    const profile = providerTypes[provider.type];
    const baseUrl = (provider.base_url ?? profile.defaultBaseUrl)?.replace(/\/+$/, '');
    const apiKey = provider.api_key ? provider.api_key : null;
    const derives: boolean = (profile as ProviderTypeProfile).derivesBaseUrl === true;
    const models = provider.models && provider.models.length > 0 ? provider.models : null;
    if (!baseUrl && !derives) {
      // An instance declared in YAML with a required field missing is a mistake; an
      // environment variable seen without its companion is skipped with a warning.
      if (!fromEnv) throw new ConfigError(`${key}.base_url`, `type ${provider.type} needs a base_url`);
      warnings.push(`provider instance "${name}" is not registered: type ${provider.type} needs a base_url`);
      continue;
    }
    if (apiKey === null && (profile.requiresApiKey || origins.has(`providers.${name}.api_key`))) {
      const dropped = missingKey(name, provider.type, models, origins);
      warnings.push(`provider instance "${name}" is disabled: ${dropped.reason}`);
      disabled.push(dropped);
      continue;
    }
    providers.push({ name, type: provider.type, apiKey, baseUrl: baseUrl ?? '', models, options: providerOptionsOf(provider) });
  }
  return { providers, disabled };
}

/** A dropped instance, naming the setting to give: the variable its key comes from, else the YAML key. */
function missingKey(
  name: string,
  type: DisabledProvider['type'],
  models: readonly string[] | null,
  origins: Map<string, string>,
): DisabledProvider {
  const yamlKey = `providers.${name}.api_key`;
  const variable = origins.get(yamlKey);
  const setting = variable ?? yamlKey;
  const reason =
    variable === undefined
      ? `no api_key is set (${yamlKey})`
      : `no api_key is set: the environment variable ${variable} is empty or unset (${yamlKey})`;
  return { name, type, reason, setting, models };
}

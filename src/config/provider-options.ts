import type { ProviderDocument } from './schema.ts';
import type { ProviderOptions } from '../providers/provider-settings.ts';

/** The type-specific fields of a provider entry (Azure, Bedrock, Vertex, Gemini), unset ones left out. */
export function providerOptionsOf(provider: ProviderDocument): ProviderOptions {
  const options: Record<string, unknown> = {
    apiVersion: provider.api_version,
    deployments: provider.deployments,
    region: provider.region,
    awsAccessKeyId: provider.aws_access_key_id,
    awsSecretAccessKey: provider.aws_secret_access_key,
    awsSessionToken: provider.aws_session_token,
    project: provider.project,
    location: provider.location,
    credentials: provider.credentials,
    credentialsJson: provider.credentials_json,
    api: provider.api,
    forwardAccountHeaders: provider.forward_account_headers,
    resourcesDefault: provider.resources_default,
  };
  for (const key of Object.keys(options)) if (options[key] === undefined || options[key] === '') delete options[key];
  return options as ProviderOptions;
}

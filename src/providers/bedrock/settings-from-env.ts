import type { ProviderOptions, ProviderSettings } from '../provider-settings.ts';

type Env = Readonly<Record<string, string | undefined>>;

const valueOf = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
};

/**
 * Bedrock instances complete their settings from AWS's standard variables: the region from
 * `AWS_REGION` (else `AWS_DEFAULT_REGION`) when `region` is unset, and the access key from
 * `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN` when the instance has
 * neither its own `aws_*` keys nor an `api_key`. Other instances are returned unchanged.
 */
export function withAwsEnvironment(providers: ProviderSettings[], env: Env): ProviderSettings[] {
  return providers.map((provider) => (provider.type === 'bedrock' ? { ...provider, options: awsOptions(provider, env) } : provider));
}

function awsOptions(provider: ProviderSettings, env: Env): ProviderOptions {
  const options: Record<string, unknown> = { ...provider.options };
  const region = valueOf(env, 'AWS_REGION') ?? valueOf(env, 'AWS_DEFAULT_REGION');
  if (options['region'] === undefined && region !== undefined) options['region'] = region;
  const ownKeys = options['awsAccessKeyId'] !== undefined || options['awsSecretAccessKey'] !== undefined;
  const accessKeyId = valueOf(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = valueOf(env, 'AWS_SECRET_ACCESS_KEY');
  if (!ownKeys && provider.apiKey === null && accessKeyId !== undefined && secretAccessKey !== undefined) {
    options['awsAccessKeyId'] = accessKeyId;
    options['awsSecretAccessKey'] = secretAccessKey;
    const sessionToken = valueOf(env, 'AWS_SESSION_TOKEN');
    if (sessionToken !== undefined) options['awsSessionToken'] = sessionToken;
  }
  return options as ProviderOptions;
}

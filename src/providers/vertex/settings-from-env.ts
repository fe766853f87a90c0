import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../../errors/config-error.ts';
import type { ProviderSettings } from '../provider-settings.ts';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Vertex instances completed from Google's standard variables and files: `project` from
 * GOOGLE_CLOUD_PROJECT and `location` from GOOGLE_CLOUD_LOCATION when the entry sets none,
 * and the service-account file named by `credentials` read into `credentialsJson` (a missing
 * or unreadable file stops the gateway at startup). Without either credential setting the
 * adapter uses application default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud, the
 * metadata server), which google-auth-library finds itself.
 */
export function withVertexEnvironment(providers: ProviderSettings[], env: Env): ProviderSettings[] {
  return providers.map((provider) => (provider.type === 'vertex' ? completeVertex(provider, env) : provider));
}

function completeVertex(provider: ProviderSettings, env: Env): ProviderSettings {
  const options = { ...provider.options };
  const project = env['GOOGLE_CLOUD_PROJECT']?.trim();
  const location = env['GOOGLE_CLOUD_LOCATION']?.trim();
  if (options.project === undefined && project) Object.assign(options, { project });
  if (options.location === undefined && location) Object.assign(options, { location });
  if (options.credentialsJson === undefined && options.credentials !== undefined) {
    Object.assign(options, { credentialsJson: readCredentials(provider.name, options.credentials) });
  }
  const key = provider.options.credentialsJson === undefined ? 'credentials' : 'credentials_json';
  if (options.credentialsJson !== undefined) checkJson(`providers.${provider.name}.${key}`, options.credentialsJson);
  return { ...provider, options };
}

function readCredentials(name: string, path: string): string {
  try {
    return readFileSync(resolve(path), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(`providers.${name}.credentials`, `cannot read the service-account file ${path} (${reason})`);
  }
}

function checkJson(key: string, text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(key, 'the credentials are not a JSON object');
  }
}

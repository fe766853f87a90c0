import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/load.ts';

const load = (env: Record<string, string>, yaml?: string) => {
  const cwd = mkdtempSync(join(tmpdir(), 'azure-env-test-'));
  if (yaml !== undefined) writeFileSync(join(cwd, 'config.yaml'), yaml);
  return loadSettings({ argv: [], env, cwd }).settings.providers;
};

describe('Azure environment variables', () => {
  it('set api_version of azure and azure-<suffix> instances over YAML', () => {
    const yaml =
      'providers:\n  azure:\n    type: azure\n    base_url: https://a.openai.azure.com\n    api_key: k\n    api_version: 2024-06-01\n';
    const providers = load(
      {
        AZURE_API_VERSION: '2024-10-21',
        AZURE_EAST_API_KEY: 'k2',
        AZURE_EAST_BASE_URL: 'https://e.openai.azure.com',
        AZURE_EAST_API_VERSION: 'v1',
      },
      yaml,
    );
    expect(providers.map((provider) => [provider.name, provider.options.apiVersion])).toEqual([
      ['azure', '2024-10-21'],
      ['azure-east', 'v1'],
    ]);
  });

  it("declare azure-openai from the Azure SDKs' variables", () => {
    const [provider] = load({
      AZURE_OPENAI_API_KEY: 'k',
      AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com/',
      OPENAI_API_VERSION: 'preview',
    });
    expect(provider).toMatchObject({ name: 'azure-openai', type: 'azure', apiKey: 'k', baseUrl: 'https://r.openai.azure.com' });
    expect(provider?.options.apiVersion).toBe('preview');
  });

  it('leave other instances and undeclared ones alone', () => {
    expect(load({ AZURE_API_VERSION: '2024-10-21', OPENAI_API_VERSION: 'x', OPENAI_API_KEY: 'k' }).map((p) => [p.name, p.options])).toEqual(
      [['openai', {}]],
    );
  });
});

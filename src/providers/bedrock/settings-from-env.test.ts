import { describe, expect, it } from 'vitest';

import { withAwsEnvironment } from './settings-from-env.ts';
import { loadSettings } from '../../config/load.ts';
import type { ProviderSettings } from '../provider-settings.ts';

const instance = (overrides: Partial<ProviderSettings> = {}): ProviderSettings => ({
  name: 'aws',
  type: 'bedrock',
  apiKey: null,
  baseUrl: '',
  models: null,
  options: {},
  ...overrides,
});

const env = { AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token', AWS_DEFAULT_REGION: 'eu-west-1' };

describe('withAwsEnvironment', () => {
  it('fills region and keys of a Bedrock instance from the AWS variables', () => {
    const [settings] = withAwsEnvironment([instance()], env);
    expect(settings?.options).toEqual({
      region: 'eu-west-1',
      awsAccessKeyId: 'AKIDENV',
      awsSecretAccessKey: 'secret',
      awsSessionToken: 'token',
    });
    expect(withAwsEnvironment([instance()], { ...env, AWS_REGION: 'us-west-2' })[0]?.options.region).toBe('us-west-2');
  });

  it("keeps the instance's own settings, API key and other types as they are", () => {
    const own = instance({ options: { region: 'ap-south-1', awsAccessKeyId: 'AKIDOWN', awsSecretAccessKey: 'own' } });
    expect(withAwsEnvironment([own], env)[0]?.options).toEqual(own.options);
    expect(withAwsEnvironment([instance({ apiKey: 'bedrock-key' })], env)[0]?.options).toEqual({ region: 'eu-west-1' });
    const openai = instance({ type: 'openai', name: 'openai' });
    expect(withAwsEnvironment([openai], env)[0]).toBe(openai);
    expect(withAwsEnvironment([instance()], { AWS_ACCESS_KEY_ID: 'AKIDENV' })[0]?.options).toEqual({});
  });
});

describe('a Bedrock instance in the loaded settings', () => {
  it('needs no api_key nor base_url, and takes the AWS variables (BEDROCK_MODELS declares it)', () => {
    const { settings } = loadSettings({ argv: [], cwd: '/nonexistent', env: { ...env, BEDROCK_MODELS: 'amazon.nova-pro-v1:0' } });
    expect(settings.providers).toEqual([
      {
        name: 'bedrock',
        type: 'bedrock',
        apiKey: null,
        baseUrl: '',
        models: ['amazon.nova-pro-v1:0'],
        options: { region: 'eu-west-1', awsAccessKeyId: 'AKIDENV', awsSecretAccessKey: 'secret', awsSessionToken: 'token' },
      },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { azureCredentialHeaders, deploymentOf, modelOfBody, withDeployment } from './deployments.ts';

describe('deploymentOf', () => {
  it('maps through deployments, else the model id is the deployment', () => {
    expect(deploymentOf({ 'gpt-4o': 'gpt-4o-prod' }, 'gpt-4o')).toBe('gpt-4o-prod');
    expect(deploymentOf({ 'gpt-4o': 'gpt-4o-prod' }, 'gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(deploymentOf(undefined, 'gpt-4o')).toBe('gpt-4o');
    expect(deploymentOf({}, 'toString')).toBe('toString');
  });
});

describe('modelOfBody and withDeployment', () => {
  it('reads and replaces the model of a JSON body only', () => {
    expect(modelOfBody('{"model":"gpt-4o","input":"x"}')).toBe('gpt-4o');
    expect(modelOfBody('not json')).toBeNull();
    expect(modelOfBody(Buffer.from('{"model":"gpt-4o"}'))).toBe('gpt-4o');
    expect(modelOfBody(Buffer.from('--boundary\r\n'))).toBeNull();
    expect(JSON.parse(withDeployment('{"model":"gpt-4o","input":"x"}', 'prod') as string)).toEqual({ model: 'prod', input: 'x' });
    const same = '{"model": "prod"}';
    expect(withDeployment(same, 'prod')).toBe(same);
    const form = Buffer.from('--b\r\n');
    expect(withDeployment(form, 'prod')).toBe(form);
  });
});

describe('azureCredentialHeaders', () => {
  it('sends a key as api-key and a "Bearer " value as an Entra ID token', () => {
    expect(azureCredentialHeaders('k-123')).toEqual({ 'api-key': 'k-123' });
    expect(azureCredentialHeaders('Bearer eyJ0eXAi.x.y')).toEqual({ authorization: 'Bearer eyJ0eXAi.x.y' });
    expect(azureCredentialHeaders(null)).toEqual({});
  });
});
